// How the agent signs in to an OAuth-protected MCP server. The protocol is the official SDK's
// (discovery from the 401, RFC 8414/9728 metadata and their issuer checks, PKCE, RFC 8707
// resource, RFC 9207 `iss`, dynamic registration or a Client ID Metadata Document, refresh,
// step-up with the union of scopes); this file is the part the SDK leaves to an application:
// where tokens are kept (token-file.ts), the loopback redirect (loopback.ts), what the person
// sees, and the `state` check.
//   never  (agent call, tools, triage): use what `agent login` saved, refresh it, never ask;
//   print  (agent login): print the URL to open and wait for the browser to come back;
//   follow: fetch the URL and follow its redirects, for an authorization server that approves
//           without a page (the conformance suite's, a test's). Never a person's.
import { randomBytes } from 'node:crypto';
import {
  auth,
  ClientCredentialsProvider,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { UsageError } from '../usage-error.js';
import { type Loopback, startLoopback } from './loopback.js';
import { defaultTokenFile, TokenFile } from './token-file.js';

export type SignInMode = 'never' | 'print' | 'follow';

export const SIGN_IN_MODES: readonly SignInMode[] = ['never', 'print', 'follow'];

/** How long a person has to finish signing in in the browser. */
export const SIGN_IN_TIMEOUT_MS = 300_000;

export class SignInRequiredError extends UsageError {
  constructor(server: string) {
    super(
      `${server} needs you to sign in: run  agent login --mcp-url ${server}  (or set AGENTWIRE_CLIENT_ID and AGENTWIRE_CLIENT_SECRET for client credentials)`,
    );
  }
}

export interface AgentOAuthOptions {
  mode: SignInMode;
  /** Scope to ask for; unset, the SDK's choice (the challenge's scope, else the metadata's). */
  scope?: string | undefined;
  /** A pre-registered client (AGENTWIRE_OAUTH_CLIENT_ID); unset, CIMD or dynamic registration. */
  clientId?: string | undefined;
  /** Its secret, when it is a confidential client (AGENTWIRE_OAUTH_CLIENT_SECRET). */
  clientSecret?: string | undefined;
  /** An https URL whose document describes the agent (AGENTWIRE_CLIENT_METADATA_URL): its client_id. */
  clientMetadataUrl?: string | undefined;
  tokenFile?: TokenFile | undefined;
  /** Where the URL to open is printed (stderr). */
  say?: ((line: string) => void) | undefined;
  timeoutMs?: number | undefined;
}

export class AgentOAuthProvider implements OAuthClientProvider {
  readonly #server: string;
  readonly #options: AgentOAuthOptions;
  readonly #file: TokenFile;
  #loopback: Loopback | undefined;
  #verifier = '';
  #state = '';
  #pending = false;
  /** The agent's Client ID Metadata Document, when it has one: the SDK then uses its URL as client_id. */
  clientMetadataUrl?: string;

  private constructor(server: string, options: AgentOAuthOptions) {
    this.#server = server;
    this.#options = options;
    if (options.clientMetadataUrl) this.clientMetadataUrl = options.clientMetadataUrl;
    this.#file = options.tokenFile ?? new TokenFile(defaultTokenFile());
  }

  /** A provider for one MCP server; with a sign-in mode other than never, its loopback redirect listens. */
  static async create(server: string, options: AgentOAuthOptions): Promise<AgentOAuthProvider> {
    const provider = new AgentOAuthProvider(server, options);
    if (options.mode !== 'never') provider.#loopback = await startLoopback();
    return provider;
  }

  get tokenFile(): TokenFile {
    return this.#file;
  }

  get redirectUrl(): string {
    // Registered as a native app's loopback redirect: the authorization server accepts any port.
    return this.#loopback?.redirectUrl ?? 'http://127.0.0.1/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'agentwire agent',
      client_uri: 'https://github.com/agentwire/agentwire',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.#options.scope ? { scope: this.#options.scope } : {}),
      // RFC 8252 §7.3 through OpenID registration's application_type: any loopback port.
      application_type: 'native',
    } as OAuthClientMetadata;
  }

  state(): string {
    this.#state = randomBytes(16).toString('base64url');
    return this.#state;
  }

  clientInformation(ctx?: { issuer?: string }): StoredOAuthClientInformation | undefined {
    if (this.#options.clientId) {
      return {
        client_id: this.#options.clientId,
        ...(this.#options.clientSecret ? { client_secret: this.#options.clientSecret } : {}),
      } as StoredOAuthClientInformation;
    }
    const entry = this.#file.get(this.#server);
    if (!entry.client) return undefined;
    // A registration belongs to the authorization server that made it.
    if (ctx?.issuer && entry.issuer && ctx.issuer !== entry.issuer) return undefined;
    return entry.client as StoredOAuthClientInformation;
  }

  saveClientInformation(client: StoredOAuthClientInformation, ctx?: { issuer?: string }): void {
    this.#file.update(this.#server, (entry) => ({
      ...entry,
      client: { ...client },
      issuer: ctx?.issuer ?? entry.issuer,
    }));
  }

  tokens(ctx?: { issuer?: string }): StoredOAuthTokens | undefined {
    const entry = this.#file.get(this.#server);
    if (ctx?.issuer && entry.issuer && ctx.issuer !== entry.issuer) return undefined;
    return entry.tokens as StoredOAuthTokens | undefined;
  }

  saveTokens(tokens: StoredOAuthTokens, ctx?: { issuer?: string }): void {
    this.#file.update(this.#server, (entry) => ({
      ...entry,
      tokens: { ...tokens },
      issuer: ctx?.issuer ?? entry.issuer,
      savedAt: Math.floor(Date.now() / 1000),
    }));
  }

  /** What the SDK asks to forget when the server refused them (a revoked token, a deleted client). */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'verifier') {
      this.#verifier = '';
      return;
    }
    // Discovery again (the resource may have moved to another authorization server, SEP-2352).
    if (scope === 'discovery' || scope === 'all') this.#discovery = undefined;
    if (scope === 'discovery') return;
    this.#file.update(this.#server, (entry) => {
      if (scope === 'all') return undefined;
      return scope === 'client' ? { ...entry, client: undefined } : { ...entry, tokens: undefined };
    });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.#options.mode === 'never' || !this.#loopback) throw new SignInRequiredError(this.#server);
    this.#pending = true;
    if (this.#options.mode === 'print') {
      (this.#options.say ?? ((line) => process.stderr.write(`${line}\n`)))(
        `To sign in to ${this.#server}, open this URL in a browser:\n\n  ${url.toString()}\n\nWaiting for the browser to come back to ${this.#loopback.redirectUrl} ...`,
      );
      return;
    }
    // follow: the authorization server answers with redirects that end at our loopback.
    await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
  }

  /** What discovery found, kept for the callback leg (the SDK checks the issuer there, SEP-2352). */
  #discovery: unknown;

  saveDiscoveryState(state: unknown): void {
    this.#discovery = state;
  }

  discoveryState(): never {
    return this.#discovery as never;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.#verifier) throw new Error('no sign-in is under way (no PKCE verifier)');
    return this.#verifier;
  }

  /** Whether a sign-in was started and waits for the browser. */
  get pending(): boolean {
    return this.#pending;
  }

  /**
   * After a redirect: waits for the browser to come back, checks `state`, and lets the SDK
   * check `iss` (RFC 9207) and redeem the code. False when no sign-in was under way.
   */
  async completeSignIn(): Promise<boolean> {
    if (!this.#pending || !this.#loopback) return false;
    const query = await this.#loopback.callback(this.#options.timeoutMs ?? SIGN_IN_TIMEOUT_MS);
    this.#pending = false;
    const error = query.get('error');
    if (error) {
      throw new UsageError(
        `sign-in refused by the authorization server: ${error}${query.get('error_description') ? `: ${query.get('error_description')?.slice(0, 300)}` : ''}`,
      );
    }
    if (query.get('state') !== this.#state)
      throw new UsageError('sign-in refused: the state the browser brought back is not the one sent');
    const code = query.get('code');
    if (!code) throw new UsageError('sign-in refused: the callback has no code');
    const iss = query.get('iss');
    await auth(this, {
      serverUrl: this.#server,
      authorizationCode: code,
      ...(iss !== null ? { iss } : {}),
      ...(this.#options.scope ? { scope: this.#options.scope } : {}),
    });
    // What discovery found served this sign-in only: the next 401 discovers again, so that a
    // resource that moved to another authorization server is followed there (SEP-2352).
    this.#discovery = undefined;
    return true;
  }

  close(): void {
    this.#loopback?.close();
  }
}

/**
 * Client credentials for scripts and CI, from AGENTWIRE_CLIENT_ID, AGENTWIRE_CLIENT_SECRET and
 * AGENTWIRE_OAUTH_ISSUER (the credentials go to that authorization server only); undefined
 * when they are not set.
 */
export function clientCredentialsFromEnv(env: NodeJS.ProcessEnv): OAuthClientProvider | undefined {
  const clientId = env.AGENTWIRE_CLIENT_ID;
  const clientSecret = env.AGENTWIRE_CLIENT_SECRET;
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret)
    throw new UsageError('AGENTWIRE_CLIENT_ID and AGENTWIRE_CLIENT_SECRET go together: set both, or neither');
  const expectedIssuer = env.AGENTWIRE_OAUTH_ISSUER;
  if (!expectedIssuer) {
    throw new UsageError(
      'AGENTWIRE_OAUTH_ISSUER is not set: client credentials are only sent to the authorization server it names',
    );
  }
  return new ClientCredentialsProvider({
    clientId,
    clientSecret,
    clientName: 'agentwire agent (client credentials)',
    expectedIssuer,
    ...(env.AGENTWIRE_OAUTH_SCOPE ? { scope: env.AGENTWIRE_OAUTH_SCOPE } : {}),
  });
}

/** The sign-in mode a flag names. */
export function signInModeOf(value: string | undefined, fallback: SignInMode): SignInMode {
  const mode = (value ?? fallback) as SignInMode;
  if (!SIGN_IN_MODES.includes(mode))
    throw new UsageError(`--sign-in must be one of ${SIGN_IN_MODES.join(', ')}; got '${value}'`);
  return mode;
}
