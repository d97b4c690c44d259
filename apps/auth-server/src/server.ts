// The authorization server as a process: oidc-provider's routes, and the sign-in and consent
// pages a person uses in a browser (/interaction/...). Plain node:http in front, because the
// provider is a Koa app with its own request handler; the pages are small forms.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';
import type Provider from 'oidc-provider';
import type { Configuration } from 'oidc-provider';
import { createProvider, describeScope, escapeHtml, grantFor } from './provider.js';
import { TOKEN_EXCHANGE } from './token-exchange.js';
import { checkLogin, findUser, USERS } from './users.js';

export interface AuthServerOptions {
  host: string;
  port: number;
  /** The public URL; default http://<host>:<port> once listening. */
  issuer?: string | undefined;
  keys: JWK[];
  resources: Record<string, readonly string[]>;
  clients?: NonNullable<Configuration['clients']> | undefined;
  /** SCRIPT_CLIENT_SECRET: registers agentwire-scripts, a confidential client (client credentials, and codes). */
  scriptClientSecret?: string | undefined;
  /** GATEWAY_CLIENT_SECRET: registers agentwire-gateway, which may exchange a user's token for an API's. */
  gatewayClientSecret?: string | undefined;
  /**
   * GATEWAY_REDIRECT_URIS: where agentwire-gateway may bring a user back after signing them in
   * (its identity: connect learns who opened a link); none: it signs no one in.
   */
  gatewayRedirectUris?: string[] | undefined;
  /** DEMO_PASSWORD: the demo users' password. */
  demoPassword: string;
  cookieKeys?: string[] | undefined;
  accessTokenTtl?: number | undefined;
  adapter?: Configuration['adapter'] | undefined;
  /** Behind a TLS-terminating proxy: believe X-Forwarded-Proto (AUTH_TRUST_PROXY). */
  trustProxy?: boolean | undefined;
  allowInsecureClientMetadata?: boolean | undefined;
}

export interface AuthServer {
  issuer: string;
  provider: Provider;
  close(): Promise<void>;
}

/** The largest form a sign-in page accepts. */
const MAX_FORM_BYTES = 8 * 1024;

/** The agent's registered client: public, PKCE, any loopback port (RFC 8252 §7.3). */
export const AGENT_CLIENT = {
  client_id: 'agentwire-agent',
  client_name: 'agentwire agent',
  application_type: 'native',
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  redirect_uris: ['http://127.0.0.1/callback'],
} as const;

export async function startAuthServer(options: AuthServerOptions): Promise<AuthServer> {
  let provider: Provider | undefined;
  const server = createServer((request, response) => {
    if (!provider) {
      response.writeHead(503).end();
      return;
    }
    const current = provider;
    if (request.url?.startsWith('/interaction/')) {
      interaction(current, request, response, options).catch((error: unknown) => {
        if (!response.headersSent)
          page(response, 400, 'Sign-in failed', `<p>${escapeHtml((error as Error).message)}</p>`);
      });
      return;
    }
    current.callback()(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const issuer = (options.issuer ?? `http://${host}:${port}`).replace(/\/$/, '');
  provider = await createProvider({
    issuer,
    keys: options.keys,
    resources: options.resources,
    clients:
      options.clients ??
      defaultClients(options.scriptClientSecret, options.gatewayClientSecret, options.gatewayRedirectUris),
    cookieKeys: options.cookieKeys ?? [randomBytes(32).toString('base64url')],
    accessTokenTtl: options.accessTokenTtl,
    adapter: options.adapter,
    allowInsecureClientMetadata: options.allowInsecureClientMetadata,
  });
  if (options.trustProxy) provider.proxy = true;
  return {
    issuer,
    provider,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The agent, and with their secrets the scripts' and the gateway's confidential clients. */
export function defaultClients(
  scriptClientSecret: string | undefined,
  gatewayClientSecret?: string | undefined,
  gatewayRedirectUris: readonly string[] = [],
): NonNullable<Configuration['clients']> {
  const agent = {
    ...AGENT_CLIENT,
    redirect_uris: [...AGENT_CLIENT.redirect_uris],
    grant_types: [...AGENT_CLIENT.grant_types],
    response_types: [...AGENT_CLIENT.response_types],
  };
  const gateway = gatewayClientSecret
    ? [
        {
          client_id: GATEWAY_CLIENT_ID,
          client_name: 'agentwire gateway',
          client_secret: gatewayClientSecret,
          token_endpoint_auth_method: 'client_secret_basic' as const,
          // Token exchange; and with redirect URIs, a sign-in (an ID token, no API token) so that
          // identity: connect learns who opened a link.
          ...(gatewayRedirectUris.length > 0
            ? {
                grant_types: [TOKEN_EXCHANGE, 'authorization_code'],
                response_types: ['code'] as ['code'],
                redirect_uris: [...gatewayRedirectUris],
              }
            : { grant_types: [TOKEN_EXCHANGE], response_types: [], redirect_uris: [] }),
        },
      ]
    : [];
  if (!scriptClientSecret) return [agent, ...gateway];
  return [
    agent,
    ...gateway,
    {
      client_id: SCRIPT_CLIENT_ID,
      client_name: 'agentwire scripts',
      client_secret: scriptClientSecret,
      application_type: 'native',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials', 'authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
    },
  ];
}

export const SCRIPT_CLIENT_ID = 'agentwire-scripts';
export const GATEWAY_CLIENT_ID = 'agentwire-gateway';

/** The sign-in and consent steps of one authorization request. */
async function interaction(
  provider: Provider,
  request: IncomingMessage,
  response: ServerResponse,
  options: AuthServerOptions,
): Promise<void> {
  const details = await provider.interactionDetails(request, response);
  const { uid, prompt, params } = details;
  const client = await provider.Client.find(String(params.client_id));
  const clientName = escapeHtml(client?.clientName ?? String(params.client_id));
  const action = request.url?.split('?')[0]?.split('/')[3];

  if (request.method === 'POST' && action === 'login') {
    const form = await readForm(request);
    const user = checkLogin(form.get('login') ?? '', form.get('password') ?? '', options.demoPassword);
    if (!user) {
      return loginPage(response, uid, clientName, 'That login and password do not match a demo user.');
    }
    await provider.interactionFinished(
      request,
      response,
      { login: { accountId: user.id } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (request.method === 'POST' && action === 'confirm') {
    const user = findUser(details.session?.accountId ?? '');
    if (!user) throw new Error('sign in first');
    const { grantId } = await grantFor(provider, details, user.scopes, options.resources);
    await provider.interactionFinished(request, response, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  if (request.method === 'POST' && action === 'abort') {
    await provider.interactionFinished(
      request,
      response,
      { error: 'access_denied', error_description: 'the user declined' },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (request.method !== 'GET') {
    page(response, 405, 'Not allowed', '<p>This page takes GET, or its own forms.</p>');
    return;
  }
  if (prompt.name === 'login') return loginPage(response, uid, clientName);
  const user = findUser(details.session?.accountId ?? '');
  const asked = String(params.scope ?? '')
    .split(' ')
    .filter((s) => s !== '' && s !== 'openid' && s !== 'offline_access');
  const allowed = asked.filter((s) => user?.scopes.includes(s));
  const refused = asked.filter((s) => !user?.scopes.includes(s));
  const list = (scopes: string[]) =>
    scopes.map((s) => `<li><code>${escapeHtml(s)}</code>: ${escapeHtml(describeScope(s))}</li>`).join('');
  page(
    response,
    200,
    'Allow access?',
    `<p><b>${clientName}</b> asks to act as <b>${escapeHtml(user?.name ?? '')}</b>${params.resource ? ` at <code>${escapeHtml(String(params.resource))}</code>` : ''}.</p>
<p>It may:</p><ul id="granted">${list(allowed) || '<li>nothing your role allows</li>'}</ul>
${refused.length > 0 ? `<p>Your role does not allow, so it will not get:</p><ul id="refused">${list(refused)}</ul>` : ''}
<form method="post" action="/interaction/${uid}/confirm"><button id="allow" type="submit">Allow</button></form>
<form method="post" action="/interaction/${uid}/abort"><button id="deny" type="submit">Deny</button></form>`,
  );
}

function loginPage(response: ServerResponse, uid: string, clientName: string, problem?: string) {
  const users = USERS.map((u) => `<li><code>${u.id}</code>: ${escapeHtml(u.name)}, ${escapeHtml(u.title)}</li>`).join(
    '',
  );
  page(
    response,
    problem ? 401 : 200,
    'Sign in to Cardinal Energy',
    `<p><b>${clientName}</b> wants to act for you.</p>
${problem ? `<p id="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/interaction/${uid}/login" autocomplete="off">
<label>Login <input id="login" name="login" required maxlength="40"></label>
<label>Password <input id="password" name="password" type="password" required maxlength="200"></label>
<button id="sign-in" type="submit">Sign in</button>
</form>
<p>Demo users (the password is DEMO_PASSWORD of this server):</p><ul>${users}</ul>
<form method="post" action="/interaction/${uid}/abort"><button type="submit">Cancel</button></form>`,
  );
}

function page(response: ServerResponse, status: number, title: string, body: string) {
  response
    .writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    })
    .end(
      `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title>
<style>body{font:16px system-ui;max-width:34em;margin:3em auto;padding:0 1em}label{display:block;margin:.6em 0}input{display:block;width:100%;padding:.4em}button{margin:.6em .6em 0 0;padding:.5em 1.2em}#problem{color:#a00}</style>
<h1>${title}</h1>${body}</html>`,
    );
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new Error(`the form is larger than ${MAX_FORM_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
