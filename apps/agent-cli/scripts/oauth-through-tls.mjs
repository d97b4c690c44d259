#!/usr/bin/env node
// The scaled stack's OAuth, seen from outside through HAProxy with TLS (scripts/chaos.sh runs
// this, with NODE_EXTRA_CA_CERTS naming its self-signed certificate): every URL the gateway and
// the authorization server advertise is https; a request without a token gets a 401 whose
// challenge points at https metadata; the official SDK clients v1 and v2, each with its own OAuth
// provider (client credentials), discover the gateway from that 401, get a token and call a tool.
// Usage: node scripts/oauth-through-tls.mjs MCP_URL ISSUER CLIENT_SECRET      Exit 1 on a failure.
import {
  Client as ClientV2,
  ClientCredentialsProvider as CredentialsV2,
  StreamableHTTPClientTransport as HttpV2,
} from '@modelcontextprotocol/client';
import { ClientCredentialsProvider as CredentialsV1 } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mcpUrl, issuer, secret] = process.argv.slice(2);
if (!mcpUrl || !issuer || !secret) {
  console.error('usage: oauth-through-tls.mjs MCP_URL ISSUER CLIENT_SECRET');
  process.exit(2);
}
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};
/** Every string in a document that looks like a URL. */
const urlsIn = (value) =>
  typeof value === 'string'
    ? /^[a-z]+:\/\//i.test(value)
      ? [value]
      : []
    : Array.isArray(value)
      ? value.flatMap(urlsIn)
      : value && typeof value === 'object'
        ? Object.values(value).flatMap(urlsIn)
        : [];

const challenge = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
const header = challenge.headers.get('www-authenticate') ?? '';
const metadataUrl = /resource_metadata="([^"]+)"/.exec(header)?.[1] ?? '';
check(challenge.status === 401 && metadataUrl.startsWith('https://'), `401 points at https metadata: ${metadataUrl}`);
const prm = await (await fetch(metadataUrl)).json();
check(prm.resource === mcpUrl, `the metadata names the resource as the client reached it: ${prm.resource}`);
const asMetadata = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
const advertised = [...urlsIn(prm), ...urlsIn(asMetadata)];
const plain = advertised.filter((u) => !u.startsWith('https://'));
check(
  plain.length === 0,
  `every advertised URL is https (${advertised.length} URLs${plain.length ? `; not: ${plain.join(', ')}` : ''})`,
);

const options = { clientId: 'agentwire-scripts', clientSecret: secret, expectedIssuer: issuer, scope: 'emails:read' };
for (const [name, connect] of [
  [
    'SDK v1',
    async () => {
      const client = new ClientV1({ name: 'tls-v1', version: '1' });
      await client.connect(new HttpV1(new URL(mcpUrl), { authProvider: new CredentialsV1(options) }));
      return client;
    },
  ],
  [
    'SDK v2',
    async () => {
      const client = new ClientV2({ name: 'tls-v2', version: '1' });
      await client.connect(new HttpV2(new URL(mcpUrl), { authProvider: new CredentialsV2(options) }));
      return client;
    },
  ],
]) {
  try {
    const client = await connect();
    const result = await client.callTool({ name: 'list_employees', arguments: {} });
    check(
      !result.isError && JSON.stringify(result.content).includes('Ada Okafor'),
      `${name}: discovered, got a token, called list_employees`,
    );
    await client.close();
  } catch (error) {
    check(false, `${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
process.exit(failures.length === 0 ? 0 : 1);
