// identity: connect. An upstream called with each user's own token from a third party (GitHub,
// Google, a company's API), which the user gives the gateway once, in their browser: the pattern
// the MCP specification (2025-11-25, URL mode elicitation) describes for a server that is an
// OAuth client of a third party. The gateway is that client; the MCP client never sees the
// third party's tokens, and the user's MCP token never goes to the third party.
//
// A call that finds no token begins a sign-in and answers with its URL (URLElicitationRequired,
// -32042, to a client that declared URL elicitation; else an error result that names the URL).
// In the browser:
//   1. GET /connect/<id>: the sign-in bound to this browser (a cookie), then to the gateway's
//      own authorization server, to learn who opened the link.
//   2. GET /connect/signed-in: the ID token says who; it must be the user the call was made for,
//      else the sign-in ends (a link sent to someone else cannot connect their account to yours).
//      Then on to the third party's authorization endpoint (authorization code, PKCE S256).
//   3. GET /connect/callback/<upstream>: the code exchanged for the user's token, sealed and kept
//      (one address per upstream: a code that comes back at another third party's address is
//      refused, so one third party cannot pass for another, the mix-up of RFC 9207)
//      (connect/vault.ts). The call, made again, goes through.
// Every state is random, used once and bound to the browser that began the sign-in.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TokenVerifier } from '@agentwire/oauth';
import type { ConnectNeeded } from '../tools/tool.js';
import { AuthServerUnavailableError, fetchTokenAnswer, type TokenAnswer } from './token-endpoint.js';
import { type ConnectedToken, type ConnectStore, Sealer, TokenVault, userKey } from './vault.js';

/** One upstream's third party, from the config file's `connect` block. */
export interface ConnectUpstream {
  name: string;
  authorizationUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** RFC 8707: the resource the token is for, when the third party asks for one. */
  resource?: string | undefined;
  /** How the client authenticates at tokenUrl: HTTP Basic (default) or in the form. */
  clientAuth?: 'basic' | 'post' | undefined;
}

export interface ConnectOptions {
  /** The gateway's public origin (OAUTH_RESOURCE's): where the browser comes back to. */
  origin: string;
  /** The gateway's authorization server (OAUTH_ISSUER), and its token checks. */
  issuer: string;
  verifier: TokenVerifier;
  /** The gateway's own client there (OAUTH_EXCHANGE_CLIENT_ID and _SECRET). */
  client: { clientId: string; clientSecret: string };
  upstreams: ConnectUpstream[];
  store: ConnectStore;
  /** CONNECT_TOKEN_KEY: what every sealed entry is sealed with. */
  key: string;
  /** CONNECT_FLOW_TTL_MS: how long a sign-in may take, from the call that began it. Default 10 minutes. */
  flowTtlMs?: number | undefined;
  /** CONNECT_TOKEN_TTL_MS: how long a user's token is kept. Default 30 days. */
  tokenTtlMs?: number | undefined;
  /** Time limit and size cap of each answer of a token endpoint. Default 10 s, 64 KiB. */
  fetchLimits?: { timeoutMs: number; maxBytes: number } | undefined;
  now?: (() => number) | undefined;
}

export const DEFAULT_FLOW_TTL_MS = 10 * 60_000;
export const DEFAULT_TOKEN_TTL_MS = 30 * 24 * 3_600_000;
/** The browser's cookie that binds a sign-in to it: one per link, so that two sign-ins in one browser do not clash. */
export const CONNECT_COOKIE = 'agentwire_connect';
/** The most times one link is opened (each opening begins a sign-in of its own); then it is spent. */
export const MAX_OPENS_PER_LINK = 10;
/** A token this close to its expiry is refreshed first. */
const REFRESH_BEFORE_MS = 60_000;
/** How often a replica waiting for another's refresh looks for the new token. */
const REFRESH_POLL_MS = 25;
/** How often a call waiting for its user to finish connecting looks for the token. */
const CONNECT_POLL_MS = 250;

/** A sign-in begun by a call: whom for, and which upstream. */
interface Flow {
  id: string;
  subject: string;
  upstream: string;
  until: number;
  /** The HTTP session whose call began it, when its client can be told it ended (URL elicitation). */
  session?: string | undefined;
}

/** Sessions one link tells it ended, at most (a user's calls from many sessions reuse one link). */
const MAX_SESSIONS_PER_LINK = 16;

/** One step's state in the browser, as the redirect back will present it. */
interface Step {
  flow: string;
  kind: 'login' | 'authorize';
  /** A hash of the browser's cookie: the step must come back to the same browser. */
  browser: string;
  verifier: string;
  nonce?: string | undefined;
}

/** A cookie to set: over https `__Host-` prefixed (Secure, Path=/, so no sibling site can set it), else on /connect. */
export interface ConnectCookie {
  name: string;
  value: string;
  path: string;
  secure: boolean;
  maxAgeS: number;
}

/** What a route answers: a redirect (maybe setting the browser's cookie), or a page. */
export type ConnectAnswer =
  | { kind: 'redirect'; location: string; cookie?: ConnectCookie | undefined }
  | { kind: 'page'; status: number; title: string; text: string };

const page = (status: number, title: string, text: string): ConnectAnswer => ({ kind: 'page', status, title, text });
const hash = (value: string) => createHash('sha256').update(value).digest('base64url');
const random = () => randomBytes(24).toString('base64url');
/** RFC 7636: a code verifier of 43 to 128 characters; 32 random bytes make 43. */
const newVerifier = () => randomBytes(32).toString('base64url');
const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const FLOW_ID = /^[A-Za-z0-9_-]{16,64}$/;

export class ConnectFlow {
  readonly #options: ConnectOptions;
  readonly #upstreams: Map<string, ConnectUpstream>;
  readonly #sealer: Sealer;
  readonly #vault: TokenVault;
  readonly #now: () => number;
  readonly #flowTtlMs: number;
  readonly #limits: { timeoutMs: number; maxBytes: number };
  /** Refreshes under way in this process, one per user and upstream. */
  readonly #refreshing = new Map<string, Promise<ConnectedToken | undefined>>();
  /** Told when a user connected: the session that asked, and the link's elicitationId. */
  readonly #connected = new Set<(session: string, elicitationId: string) => void>();

  constructor(options: ConnectOptions) {
    this.#options = options;
    this.#upstreams = new Map(options.upstreams.map((u) => [u.name, u]));
    this.#now = options.now ?? Date.now;
    this.#sealer = new Sealer(options.key);
    this.#vault = new TokenVault(options.store, this.#sealer, options.tokenTtlMs ?? DEFAULT_TOKEN_TTL_MS, this.#now);
    this.#flowTtlMs = options.flowTtlMs ?? DEFAULT_FLOW_TTL_MS;
    this.#limits = options.fetchLimits ?? { timeoutMs: 10_000, maxBytes: 64 * 1024 };
  }

  /** Whether the gateway's public origin is https: its cookies are then Secure and `__Host-` prefixed. */
  get #secure(): boolean {
    return this.#options.origin.startsWith('https:');
  }

  /** The name of the cookie that binds the sign-in of one link to its browser. */
  #cookieName(flowId: string): string {
    return `${this.#secure ? '__Host-' : ''}${CONNECT_COOKIE}_${hash(flowId).slice(0, 12)}`;
  }

  get loginRedirect(): string {
    return `${this.#options.origin}/connect/signed-in`;
  }

  /** Where a third party sends the browser back: one address per upstream (names are letters, digits, _ and -). */
  callbackOf(upstream: string): string {
    return `${this.#options.origin}/connect/callback/${upstream}`;
  }

  // ---- the calls' side

  /**
   * The user's token for the upstream, refreshed when it is about to expire; undefined when they
   * have not connected (or the third party no longer takes their refresh token).
   * AuthServerUnavailableError when the third party's token endpoint cannot be reached.
   */
  async tokenFor(subject: string, upstream: string): Promise<ConnectedToken | undefined> {
    const token = await this.#vault.get(subject, upstream);
    if (!token) return undefined;
    if (token.expiresAt === undefined || token.expiresAt - REFRESH_BEFORE_MS > this.#now()) return token;
    if (token.refreshToken === undefined) {
      await this.#vault.forget(subject, upstream);
      return undefined;
    }
    const key = `${upstream}\n${subject}`;
    let refresh = this.#refreshing.get(key);
    if (!refresh) {
      refresh = this.#refreshOnce(subject, upstream, token).finally(() => this.#refreshing.delete(key));
      this.#refreshing.set(key, refresh);
    }
    return refresh;
  }

  /**
   * One refresh among every replica: a rotated refresh token works once (and a provider that sees
   * one used twice may revoke the whole grant), so the replica that claims the lock refreshes,
   * and the others wait for the token it stores.
   */
  async #refreshOnce(subject: string, upstream: string, token: ConnectedToken): Promise<ConnectedToken | undefined> {
    const lock = `refresh:${upstream}:${userKey(subject)}`;
    const refreshToken = token.refreshToken as string;
    if (await this.#options.store.claim(lock, this.#limits.timeoutMs + 1_000)) {
      try {
        // Another replica may have refreshed it between this one's read and its lock: its token
        // is taken (refreshing with the refresh token it replaced would be refused, and forget it).
        const current = await this.#vault.get(subject, upstream);
        if (!current || current.accessToken !== token.accessToken) return current;
        return await this.#refresh(subject, upstream, refreshToken);
      } finally {
        await this.#options.store.delete(lock).catch(() => undefined);
      }
    }
    const deadline = this.#now() + this.#limits.timeoutMs + 1_000;
    while (this.#now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, REFRESH_POLL_MS));
      const stored = await this.#vault.get(subject, upstream);
      // A new access token (the refresh token may be the same: not every server rotates it).
      if (!stored || stored.accessToken !== token.accessToken) return stored;
      if ((await this.#options.store.get(lock)) === undefined) break;
    }
    // The other replica ended without storing a new token: this one tries.
    return this.#refresh(subject, upstream, refreshToken);
  }

  async #refresh(subject: string, name: string, refreshToken: string): Promise<ConnectedToken | undefined> {
    const upstream = this.#upstream(name);
    const answer = await this.#tokenRequest(upstream, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      ...(upstream.resource ? { resource: upstream.resource } : {}),
    });
    // mutation testing: from here
    if ('refused' in answer) {
      // invalid_grant only (the grant was revoked, or expired): the user must connect again. Any
      // other refusal (invalid_client while a secret is rotated, a rate limit) says nothing of
      // the grant: the token is kept, and the call told to try again later.
      if (answer.error !== 'invalid_grant') {
        throw new AuthServerUnavailableError(`${upstream.tokenUrl} did not refresh the token (${answer.refused})`);
      }
      // Forgotten only if it is still the token this refresh was for.
      const stored = await this.#vault.get(subject, name);
      if (stored && stored.refreshToken !== refreshToken) return stored;
      await this.#vault.forget(subject, name);
      return undefined;
    }
    // mutation testing: to here
    // A token endpoint that keeps the refresh token may leave it out of its answer.
    const token = { ...answer.token, refreshToken: answer.token.refreshToken ?? refreshToken };
    await this.#vault.put(subject, name, token);
    return token;
  }

  /**
   * Listens for users who finished connecting: the HTTP transport tells the session that asked
   * (on its GET stream, through the event log, so on any replica). Returns the unsubscribe function.
   */
  onConnected(listener: (session: string, elicitationId: string) => void): () => void {
    this.#connected.add(listener);
    return () => this.#connected.delete(listener);
  }

  /** The names of the upstreams that connect their users. */
  get upstreamNames(): string[] {
    return [...this.#upstreams.keys()];
  }

  /**
   * The user disconnected their account; or, with `accessToken`, the upstream refused that token
   * (401): it is forgotten if it is still the one kept (another replica may have refreshed it).
   */
  forget(subject: string, upstream: string, accessToken?: string): Promise<void> {
    return accessToken === undefined
      ? this.#vault.forget(subject, upstream)
      : this.#vault.forgetIf(subject, upstream, accessToken);
  }

  /**
   * Waits for the user to finish connecting (a 2026-07-28 client accepted the link and called
   * again): the token once it is kept, or undefined after `ms` or when `signal` aborts.
   */
  async waitForToken(
    subject: string,
    upstream: string,
    ms: number,
    signal: AbortSignal,
  ): Promise<ConnectedToken | undefined> {
    const deadline = this.#now() + ms;
    for (;;) {
      const token = await this.tokenFor(subject, upstream);
      if (token || signal.aborted || this.#now() >= deadline) return token;
      await new Promise((resolve) => setTimeout(resolve, CONNECT_POLL_MS));
    }
  }

  /**
   * A sign-in for this user and upstream: the one under way, else a new one. One per user and
   * upstream at a time, so repeated calls give the same link and cannot pile up sign-ins.
   */
  async begin(subject: string, upstream: string, session?: string | undefined): Promise<ConnectNeeded> {
    const mine = `flow-of:${upstream}:${userKey(subject)}`;
    const context = `flow-of\n${upstream}\n${subject}`;
    const current = await this.#options.store.get(mine);
    const id = current === undefined ? undefined : this.#sealer.open<string>(current, context);
    const flow = id === undefined ? undefined : await this.#flow(id);
    // The link under way, while at least half its life is left (a link about to expire is no help).
    if (
      flow &&
      flow.subject === subject &&
      flow.upstream === upstream &&
      flow.until - this.#now() > this.#flowTtlMs / 2
    ) {
      // Another session of the user's gets the same link: it must hear that it ended too. Kept
      // apart from the flow, so that this write can never bring back a flow just ended.
      if (session !== undefined && session !== flow.session) {
        const told = await this.#told(flow.id);
        if (!told.includes(session) && told.length < MAX_SESSIONS_PER_LINK) {
          const sealed = this.#sealer.seal([...told, session], `flow-told\n${flow.id}`);
          await this.#options.store.set(`flow-told:${flow.id}`, sealed, flow.until - this.#now());
        }
      }
      return this.#needed(flow);
    }
    const fresh: Flow = { id: random(), subject, upstream, until: this.#now() + this.#flowTtlMs, session };
    await this.#options.store.set(`flow:${fresh.id}`, this.#sealer.seal(fresh, `flow\n${fresh.id}`), this.#flowTtlMs);
    await this.#options.store.set(mine, this.#sealer.seal(fresh.id, context), this.#flowTtlMs);
    return this.#needed(fresh);
  }

  #needed(flow: Flow): ConnectNeeded {
    return {
      elicitationId: flow.id,
      url: `${this.#options.origin}/connect/${flow.id}`,
      message: `Connect your ${flow.upstream} account: the gateway calls ${flow.upstream} as you, with a token you give it in your browser (it is never shown to this client). Open the link, sign in, then make the call again.`,
    };
  }

  /** The other sessions given this link (begin), each to be told when it is used. */
  async #told(id: string): Promise<string[]> {
    const text = await this.#options.store.get(`flow-told:${id}`);
    return text === undefined ? [] : (this.#sealer.open<string[]>(text, `flow-told\n${id}`) ?? []);
  }

  async #flow(id: string): Promise<Flow | undefined> {
    if (!FLOW_ID.test(id)) return undefined;
    const text = await this.#options.store.get(`flow:${id}`);
    return text === undefined ? undefined : this.#sealer.open<Flow>(text, `flow\n${id}`);
  }

  // ---- the browser's side

  /** GET /connect/<id>: binds the sign-in to this browser, then signs the user in at the gateway's authorization server. */
  async open(id: string): Promise<ConnectAnswer> {
    const flow = await this.#flow(id);
    if (!flow || flow.until <= this.#now()) {
      return page(
        404,
        'This link has expired',
        'This sign-in link is unknown or has expired (a link is good for a few minutes). Make the call again in your agent for a new one.',
      );
    }
    const opened = await this.#options.store.incr(`opens:${id}`, flow.until - this.#now());
    if (opened > MAX_OPENS_PER_LINK) {
      return page(
        429,
        'This link was opened too often',
        `A link may be opened ${MAX_OPENS_PER_LINK} times (MAX_OPENS_PER_LINK). Make the call again in your agent for a new one.`,
      );
    }
    const browser = random();
    const verifier = newVerifier();
    const state = random();
    const nonce = random();
    const metadata = await this.#options.verifier.issuerMetadata();
    const authorize = (metadata as { authorization_endpoint?: unknown }).authorization_endpoint;
    if (typeof authorize !== 'string') {
      return page(
        502,
        'Cannot sign in',
        `The authorization server ${this.#options.issuer} names no authorization_endpoint.`,
      );
    }
    await this.#saveStep(state, { flow: id, kind: 'login', browser: hash(browser), verifier, nonce }, flow);
    const url = new URL(authorize);
    url.search = new URLSearchParams({
      client_id: this.#options.client.clientId,
      response_type: 'code',
      redirect_uri: this.loginRedirect,
      scope: 'openid',
      state,
      nonce,
      code_challenge: challengeOf(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const cookie: ConnectCookie = {
      name: this.#cookieName(id),
      value: browser,
      path: this.#secure ? '/' : '/connect',
      secure: this.#secure,
      maxAgeS: Math.max(1, Math.ceil((flow.until - this.#now()) / 1000)),
    };
    return { kind: 'redirect', location: url.toString(), cookie };
  }

  /** GET /connect/signed-in: who signed in must be whom the call was for; then on to the third party. */
  async signedIn(query: Record<string, unknown>, cookies: Record<string, string>): Promise<ConnectAnswer> {
    const taken = await this.#takeStep(query, cookies, 'login');
    if ('kind' in taken) return taken;
    const { step, flow } = taken;
    const metadata = await this.#options.verifier.issuerMetadata();
    // RFC 9207: the answer names its issuer; it must be the gateway's (and be there when the server says it sends it).
    const announces = (metadata as { authorization_response_iss_parameter_supported?: unknown })
      .authorization_response_iss_parameter_supported;
    // mutation testing: from here
    if (query.iss !== undefined ? query.iss !== this.#options.issuer : announces === true) {
      return page(400, 'Sign-in refused', 'The answer did not come from the gateway’s authorization server (iss).');
    }
    if (!metadata.token_endpoint) {
      return page(502, 'Cannot sign in', `The authorization server ${this.#options.issuer} names no token_endpoint.`);
    }
    const login = await fetchTokenAnswer(
      metadata.token_endpoint,
      this.#options.client,
      {
        grant_type: 'authorization_code',
        code: String(query.code),
        code_verifier: step.verifier,
        redirect_uri: this.loginRedirect,
      },
      this.#limits,
    );
    const idToken = login.status === 200 ? login.body.id_token : undefined;
    if (typeof idToken !== 'string') {
      return page(502, 'Cannot sign in', `The authorization server did not sign you in (${describe(login)}).`);
    }
    let subject: string;
    try {
      const principal = await this.#options.verifier.verify(idToken, this.#options.client.clientId);
      if (principal.claims.nonce !== step.nonce) throw new Error('the ID token is for another sign-in (nonce)');
      subject = principal.subject;
    } catch (error) {
      return page(502, 'Cannot sign in', `The ID token did not check out: ${(error as Error).message}.`);
    }
    if (subject !== flow.subject) {
      await this.#options.store.delete(`flow:${flow.id}`);
      // mutation testing: to here
      return page(
        403,
        'Signed in as someone else',
        'You signed in as another user than the one whose agent asked for this link, so nothing was connected and the link no longer works. Only the person whose agent made the call can connect their account.',
      );
    }
    const upstream = this.#upstream(flow.upstream);
    const verifier = newVerifier();
    const state = random();
    await this.#saveStep(state, { flow: flow.id, kind: 'authorize', browser: step.browser, verifier }, flow);
    const url = new URL(upstream.authorizationUrl);
    const params = new URLSearchParams(url.search);
    params.set('client_id', upstream.clientId);
    params.set('response_type', 'code');
    params.set('redirect_uri', this.callbackOf(upstream.name));
    params.set('state', state);
    params.set('code_challenge', challengeOf(verifier));
    params.set('code_challenge_method', 'S256');
    if (upstream.scopes.length > 0) params.set('scope', upstream.scopes.join(' '));
    if (upstream.resource) params.set('resource', upstream.resource);
    url.search = params.toString();
    return { kind: 'redirect', location: url.toString() };
  }

  /** GET /connect/callback/<upstream>: the third party's code, exchanged for the user's token, kept. */
  async callback(at: string, query: Record<string, unknown>, cookies: Record<string, string>): Promise<ConnectAnswer> {
    const taken = await this.#takeStep(query, cookies, 'authorize');
    if ('kind' in taken) return taken;
    const { step, flow } = taken;
    if (at !== flow.upstream) {
      return page(
        400,
        'Not connected',
        'The sign-in came back at another third party’s address than the one it was sent to, so nothing was connected. Make the call again in your agent for a new link.',
      );
    }
    const upstream = this.#upstream(flow.upstream);
    const answer = await this.#tokenRequest(upstream, {
      grant_type: 'authorization_code',
      code: String(query.code),
      code_verifier: step.verifier,
      redirect_uri: this.callbackOf(flow.upstream),
      ...(upstream.resource ? { resource: upstream.resource } : {}),
    });
    if ('refused' in answer) {
      return page(502, 'Not connected', `${upstream.name} would not give a token (${answer.refused}).`);
    }
    await this.#vault.put(flow.subject, flow.upstream, answer.token);
    await this.#options.store.delete(`flow:${flow.id}`);
    await this.#options.store.delete(`flow-of:${flow.upstream}:${userKey(flow.subject)}`);
    // notifications/elicitation/complete, to the sessions whose calls were given the link (the spec: only to them).
    const told = await this.#told(flow.id);
    await this.#options.store.delete(`flow-told:${flow.id}`);
    for (const session of [flow.session, ...told]) {
      if (session !== undefined) for (const listener of this.#connected) listener(session, flow.id);
    }
    return page(
      200,
      'Connected',
      `Your ${upstream.name} account is connected. Go back to your agent and make the call again.`,
    );
  }

  async #saveStep(state: string, step: Step, flow: Flow): Promise<void> {
    const ttl = flow.until - this.#now();
    await this.#options.store.set(`step:${hash(state)}`, this.#sealer.seal(step, `step\n${state}`), Math.max(1, ttl));
  }

  /** The step a redirect back presents: used once, from the browser that began it, before the sign-in expires. */
  async #takeStep(
    query: Record<string, unknown>,
    cookies: Record<string, string>,
    kind: Step['kind'],
  ): Promise<{ step: Step; flow: Flow } | ConnectAnswer> {
    // mutation testing: from here
    const state = query.state;
    if (typeof state !== 'string' || state.length > 200) {
      return page(
        400,
        'Not a sign-in',
        'This address is where a sign-in comes back to, with its state; this request has none.',
      );
    }
    const text = await this.#options.store.take(`step:${hash(state)}`);
    const step = text === undefined ? undefined : this.#sealer.open<Step>(text, `step\n${state}`);
    if (!step || step.kind !== kind) {
      return page(
        400,
        'This sign-in has ended',
        'This step of the sign-in was already used or has expired. Make the call again in your agent for a new link.',
      );
    }
    const name = this.#cookieName(step.flow);
    const cookie = Object.hasOwn(cookies, name) ? cookies[name] : undefined;
    if (!cookie || !sameHash(hash(cookie), step.browser)) {
      return page(
        400,
        'Another browser',
        'This sign-in was begun in another browser (or its cookie was blocked). Open the link from your agent in this browser, and allow its cookie.',
      );
    }
    const flow = await this.#flow(step.flow);
    if (!flow || flow.until <= this.#now()) {
      return page(
        400,
        'This sign-in has ended',
        'The sign-in expired. Make the call again in your agent for a new link.',
      );
    }
    if (typeof query.error === 'string') {
      const said = typeof query.error_description === 'string' ? `: ${query.error_description.slice(0, 300)}` : '';
      return page(403, 'Not connected', `The sign-in was refused (${query.error.slice(0, 100)}${said}).`);
    }
    if (typeof query.code !== 'string' || query.code.length === 0 || query.code.length > 4096) {
      return page(400, 'Not a sign-in', 'The answer carries no authorization code.');
    }
    return { step, flow };
    // mutation testing: to here
  }

  #upstream(name: string): ConnectUpstream {
    const upstream = this.#upstreams.get(name);
    if (!upstream) throw new Error(`no upstream ${name} connects its users`);
    return upstream;
  }

  /**
   * A request to the third party's token endpoint: the token, or why it refused.
   * AuthServerUnavailableError when it cannot be told (the endpoint down, slow or not JSON).
   */
  async #tokenRequest(
    upstream: ConnectUpstream,
    form: Record<string, string>,
  ): Promise<{ token: ConnectedToken } | { refused: string; error: string | undefined }> {
    const started = this.#now();
    const answer = await fetchTokenAnswer(upstream.tokenUrl, upstream, form, this.#limits);
    const body = answer.body;
    if (answer.status !== 200 || typeof body.access_token !== 'string' || !body.access_token) {
      return { refused: describe(answer), error: typeof body.error === 'string' ? body.error : undefined };
    }
    const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : undefined;
    return {
      token: {
        accessToken: body.access_token,
        refreshToken: typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : undefined,
        expiresAt: expiresIn === undefined ? undefined : started + expiresIn * 1000,
        scope: typeof body.scope === 'string' ? body.scope.slice(0, 2000) : undefined,
      },
    };
  }
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function describe(answer: TokenAnswer): string {
  if (answer.status === 200) return 'its answer has no access_token';
  const error = typeof answer.body.error === 'string' ? answer.body.error.slice(0, 100) : `HTTP ${answer.status}`;
  const said =
    typeof answer.body.error_description === 'string' ? `: ${answer.body.error_description.slice(0, 300)}` : '';
  return `${error}${said}`;
}

export { AuthServerUnavailableError };

/** The upstreams that connect their users, as the config file gives them. */
export interface ConnectingUpstream {
  name: string | undefined;
  identity?: string | undefined;
  connect?: Omit<ConnectUpstream, 'name'> | undefined;
}

/**
 * One ConnectFlow for every upstream whose identity is connect; undefined when none is. The
 * gateway's OAuth settings come from `settings` (connect/settings.ts); the store from the
 * composition root (Redis shared by replicas, else this process's memory).
 */
export async function connectFlowOf(
  upstreams: readonly ConnectingUpstream[],
  settings: ConnectSettingsLike | undefined,
  store: ConnectStore | undefined,
): Promise<ConnectFlow | undefined> {
  const connecting = upstreams.filter((u) => u.identity === 'connect');
  if (connecting.length === 0) return undefined;
  if (!settings) {
    throw new Error(
      `${connecting.map((u) => u.name).join(', ')}: identity connect needs the gateway's connect settings (CONNECT_TOKEN_KEY, OAUTH_RESOURCE, OAUTH_EXCHANGE_CLIENT_SECRET)`,
    );
  }
  // Loaded only here: a gateway that connects no one never loads jose.
  const { TokenVerifier } = await import('@agentwire/oauth');
  const { MemoryConnectStore } = await import('./vault.js');
  return new ConnectFlow({
    origin: settings.origin,
    issuer: settings.issuer,
    verifier: new TokenVerifier({ issuer: settings.issuer, jwksUri: settings.jwksUri }),
    client: { clientId: settings.clientId, clientSecret: settings.clientSecret },
    upstreams: connecting.map((u) => {
      if (!u.name || !u.connect) throw new Error(`${u.name ?? 'an upstream'}: identity connect needs a connect block`);
      return { ...u.connect, name: u.name };
    }),
    store: store ?? new MemoryConnectStore(),
    key: settings.key,
    flowTtlMs: settings.flowTtlMs,
    tokenTtlMs: settings.tokenTtlMs,
  });
}

/** What connectFlowOf reads of connect/settings.ts's ConnectSettings. */
export interface ConnectSettingsLike {
  origin: string;
  issuer: string;
  jwksUri?: string | undefined;
  clientId: string;
  clientSecret: string;
  key: string;
  flowTtlMs?: number | undefined;
  tokenTtlMs?: number | undefined;
}
