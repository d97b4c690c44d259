// `agent login` and `agent logout`: sign in to an OAuth-protected MCP server (the authorization
// code flow with PKCE and a loopback redirect: the URL is printed, nothing is opened by force),
// keep the tokens in a file only this user can read, and forget them.

import { auth } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import { AgentOAuthProvider, signInModeOf } from '../auth/agent-oauth.js';
import { defaultTokenFile, TokenFile } from '../auth/token-file.js';
import { EXIT } from '../exit-codes.js';
import { print, printError } from '../print.js';
import { UsageError } from '../usage-error.js';
import { parseCommand } from './command-args.js';

const LOGIN_USAGE = 'usage: agent login [--mcp-url URL] [--scope "a b"] [--sign-in print|follow]';
const LOGOUT_USAGE = 'usage: agent logout [--mcp-url URL | --all]';

function serverOf(value: string | undefined): string {
  const server = value ?? process.env.AGENTWIRE_MCP_URL;
  if (!server) throw new UsageError(`which MCP server? give --mcp-url URL (or AGENTWIRE_MCP_URL)\n${LOGIN_USAGE}`);
  try {
    const url = new URL(server);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
  } catch {
    throw new UsageError(`--mcp-url must be an http(s) URL, got '${server.slice(0, 200)}'`);
  }
  return server;
}

export async function loginCommand(argv: string[]): Promise<number> {
  const { values } = parseCommand(
    argv,
    { 'mcp-url': { type: 'string' }, scope: { type: 'string' }, 'sign-in': { type: 'string' } },
    LOGIN_USAGE,
  );
  const server = serverOf(values['mcp-url']);
  const mode = signInModeOf(values['sign-in'], 'print');
  if (mode === 'never') throw new UsageError('agent login signs in: --sign-in must be print or follow');
  const scope = values.scope ?? process.env.AGENTWIRE_OAUTH_SCOPE;
  const provider = await AgentOAuthProvider.create(server, {
    mode,
    scope: scope || undefined,
    clientId: process.env.AGENTWIRE_OAUTH_CLIENT_ID || undefined,
    clientSecret: process.env.AGENTWIRE_OAUTH_CLIENT_SECRET || undefined,
    clientMetadataUrl: process.env.AGENTWIRE_CLIENT_METADATA_URL || undefined,
    say: (line) => printError(`${line}\n`),
  });
  try {
    // A fresh sign-in: tokens from an earlier one would be refreshed instead.
    provider.tokenFile.update(server, (entry) => ({ ...entry, tokens: undefined }));
    const result = await auth(provider, { serverUrl: server, ...(scope ? { scope } : {}) });
    if (result === 'REDIRECT') await provider.completeSignIn();
    const entry = provider.tokenFile.get(server);
    const accessToken = String((entry.tokens as { access_token?: unknown } | undefined)?.access_token ?? '');
    if (!accessToken) throw new UsageError(`signing in to ${server} gave no access token`);
    print(`${describeSignIn(server, accessToken, entry.issuer, provider.tokenFile.path)}\n`);
    return EXIT.ok;
  } finally {
    provider.close();
  }
}

export async function logoutCommand(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, { 'mcp-url': { type: 'string' }, all: { type: 'boolean' } }, LOGOUT_USAGE);
  const file = new TokenFile(defaultTokenFile());
  if (values.all) {
    file.clear();
    print(`forgot every sign-in (${file.path} removed)\n`);
    return EXIT.ok;
  }
  const server = serverOf(values['mcp-url']);
  const known = file.get(server).tokens !== undefined;
  file.update(server, () => undefined);
  print(known ? `forgot the sign-in to ${server}\n` : `no sign-in to ${server} was kept\n`);
  return EXIT.ok;
}

/** Who the token says signed in, and until when (read, not verified: the server checks it). */
function describeSignIn(server: string, accessToken: string, issuer: string | undefined, path: string): string {
  let who = '';
  try {
    const claims = decodeJwt(accessToken);
    const until = typeof claims.exp === 'number' ? new Date(claims.exp * 1000).toISOString() : 'unknown';
    who = ` as ${String(claims.sub)}, scope "${String(claims.scope ?? '')}", until ${until}`;
  } catch {
    who = ' (an opaque token)';
  }
  return `signed in to ${server}${who}${issuer ? ` (issuer ${issuer})` : ''}; tokens kept in ${path} (readable only by you)`;
}
