// The stack's authorization server, issuing tokens for one resource (comparison 13), and with
// API_RESOURCE for the API too, the gateway's client exchanging tokens with the same secret (14).
// Usage: node servers/auth-server.mjs RESOURCE CLIENT_SECRET [API_RESOURCE] -> prints the issuer URL.
import { generateKeys, startAuthServer } from '@agentwire/auth-server';

const [resource, secret, apiResource] = process.argv.slice(2);
const scopes = ['emails:read', 'digest:read', 'replies:write'];
const server = await startAuthServer({
  host: '127.0.0.1',
  port: 0,
  keys: (await generateKeys()).keys,
  resources: { [resource]: scopes, ...(apiResource ? { [apiResource]: scopes } : {}) },
  // The demo users sign in with the client secret as their password (a bench has no people).
  demoPassword: secret,
  scriptClientSecret: secret,
  ...(apiResource ? { gatewayClientSecret: secret } : {}),
  accessTokenTtl: 3600,
});
console.log(server.issuer);
process.once('SIGTERM', async () => {
  await server.close();
  process.exit(0);
});
