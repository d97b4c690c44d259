// A demo user's sign-in done by a program: the same authorization-code flow with PKCE a person
// goes through in a browser (the sign-in form, then consent), driven over HTTP by someone who
// knows DEMO_PASSWORD: the agent's embedded stack, which made the password, and tests. It ends
// with the user's access token for `resource`, with the scopes their role allows.
import { createHash, randomBytes } from 'node:crypto';

export interface DemoSignIn {
  issuer: string;
  /** A demo user's login (users.ts). */
  user: string;
  password: string;
  scope: string;
  resource: string;
  /** A public client with a loopback redirect (default the agent's). */
  clientId?: string | undefined;
}

export interface DemoTokens {
  accessToken: string;
  refreshToken: string | undefined;
  scope: string[];
  expiresIn: number;
}

/** The most redirects and pages one sign-in may take. */
const MAX_STEPS = 12;

export async function signInDemoUser(options: DemoSignIn): Promise<DemoTokens> {
  const clientId = options.clientId ?? 'agentwire-agent';
  // A loopback redirect is never followed: the code is read off the Location header.
  const redirectUri = 'http://127.0.0.1:1/callback';
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(8).toString('hex');
  const authorize = new URL(`${options.issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    scope: options.scope,
    resource: options.resource,
  }).toString();
  const cookies = new Map<string, string>();
  const send = async (url: string, form?: Record<string, string>) => {
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      if (at > 0) cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    await response.body?.cancel();
    return response;
  };
  let url = authorize.toString();
  let signedIn = false;
  for (let step = 0; step < MAX_STEPS; step++) {
    let response: Response;
    const interaction = /\/interaction\/([^/?#]+)$/.exec(new URL(url).pathname);
    if (interaction && !signedIn) {
      response = await send(`${options.issuer}/interaction/${interaction[1]}/login`, {
        login: options.user,
        password: options.password,
      });
      if (response.status === 401)
        throw new Error(`the demo user '${options.user}' could not sign in: wrong login or password`);
      signedIn = true;
    } else if (interaction) {
      response = await send(`${options.issuer}/interaction/${interaction[1]}/confirm`, {});
    } else {
      response = await send(url);
    }
    const location = response.headers.get('location');
    if (!location) throw new Error(`the sign-in stopped at ${new URL(url).pathname} (HTTP ${response.status})`);
    url = new URL(location, url).toString();
    if (url.startsWith(redirectUri)) {
      const query = new URL(url).searchParams;
      if (query.get('error'))
        throw new Error(`the sign-in was refused: ${query.get('error')} ${query.get('error_description') ?? ''}`);
      if (query.get('state') !== state) throw new Error('the sign-in answered another state');
      const token = await fetch(`${options.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: query.get('code') ?? '',
          code_verifier: verifier,
          redirect_uri: redirectUri,
          client_id: clientId,
          resource: options.resource,
        }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await token.json()) as Record<string, unknown>;
      if (typeof body.access_token !== 'string') {
        throw new Error(`the code was not exchanged: ${String(body.error)} ${String(body.error_description ?? '')}`);
      }
      return {
        accessToken: body.access_token,
        refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : undefined,
        scope: String(body.scope ?? '')
          .split(' ')
          .filter(Boolean),
        expiresIn: Number(body.expires_in ?? 0),
      };
    }
  }
  throw new Error(`the sign-in took more than ${MAX_STEPS} steps`);
}
