// The stack's authorization server, issuing tokens for one resource (comparison 13).
// Usage: node servers/auth-server.mjs RESOURCE CLIENT_SECRET -> prints the issuer URL.
import { generateKeys, startAuthServer } from '@agentwire/auth-server';

const [resource, secret] = process.argv.slice(2);
const server = await startAuthServer({
  host: '127.0.0.1',
  port: 0,
  keys: (await generateKeys()).keys,
  resources: { [resource]: ['emails:read', 'digest:read', 'replies:write'] },
  demoPassword: 'bench-unused-password',
  scriptClientSecret: secret,
  accessTokenTtl: 3600,
});
console.log(server.issuer);
process.once('SIGTERM', async () => {
  await server.close();
  process.exit(0);
});
