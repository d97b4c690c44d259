// Calls the upstream API for a tool: builds the request from the operation (path parameters
// encoded so a value cannot change the path), adds the upstream key the way the spec's
// security scheme says, sends it through the resilient client within the caller's deadline,
// and turns the answer into an MCP tool result, errors included (isError, never a throw).
// Who the upstream sees is the upstream's `identity`: the gateway's own key (service), the
// signed-in user through a token the authorization server minted for this upstream (exchange),
// or the user's own token from a third party, which they connected in their browser (connect);
// the caller's own token is never sent. A `forwardHeaders` allow-list copies named caller
// headers, never credentials or the gateway's own.

import { randomUUID } from 'node:crypto';
import {
  APIError,
  type HttpClient,
  HttpClientError,
  Ledger,
  type SseEvent,
  serverRetryDelay,
} from '@agentwire/http-client';
// Types only: @agentwire/oauth (and jose) load only in a gateway that exchanges tokens.
import type { TokenExchangeRefusedError, TokenExchanger } from '@agentwire/oauth';
import type { UpstreamReport } from '@agentwire/schemas/upstream-report';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { MAX_ANSWER_DEPTH, nestsDeeper, tooDeepAt } from '../common/json-depth.js';
import { keepRawJson } from '../common/raw-json.js';
import type { ConnectFlow } from '../connect/flow.js';
import { cookiePairs, headerValue, pathValue, queryPairs } from '../openapi/parameter-styles.js';
import { queryNameRefusal } from '../openapi/parameters.js';
import type { CallContext, ConnectNeeded, JobState, Tool, ToolResult } from '../tools/tool.js';
import { BodyError, DEFAULT_MAX_UPLOAD_BYTES, type EncodedBody, encodeBody } from './body.js';
import { describeError, mayHaveReached, mayRetry, upstreamWaitMs } from './failures.js';
import { copyForwarded, forwardable } from './forward-headers.js';
import { acceptedOf, failureText, MAX_STATUS_REDIRECTS, pathUnder, progressLine, statusWordOf } from './jobs.js';
import { upstreamMeta } from './report.js';

/** How an upstream is called: with its own key, as the user (RFC 8693 token exchange), or with the user's own token. */
export type UpstreamIdentity =
  | { mode: 'service' }
  | { mode: 'exchange'; exchanger: TokenExchanger; audience: string; issuer: string }
  | { mode: 'connect'; flow: ConnectFlow; upstream: string };

/** The authorization server that exchanges tokens, and the gateway's own client there. */
export interface ExchangeSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Default: the issuer metadata's token_endpoint. */
  tokenEndpoint?: string | undefined;
}

export interface UpstreamCallerOptions {
  apiKey?: string | undefined;
  maxUploadBytes?: number | undefined;
  identity?: UpstreamIdentity | undefined;
  /** Caller headers copied to this upstream (lower case); forbidden ones are never copied. */
  forwardHeaders?: readonly string[] | undefined;
}

/** RFC 7617: `user:password` in Base64 (a key without a colon is the user, with no password). */
export function basicCredentials(key: string): string {
  return Buffer.from(key.includes(':') ? key : `${key}:`, 'utf8').toString('base64');
}

/** The longest a call waits for its user to finish connecting, after its client accepted the link (2026-07-28). */
export const MAX_CONNECT_WAIT_MS = 60_000;

/** The most characters of an upstream event's text a progress notification carries, the ellipsis included. */
export const MAX_PROGRESS_MESSAGE = 1_000;

/** An event's text as a progress message: cut to MAX_PROGRESS_MESSAGE, never inside a surrogate pair. */
function progressMessage(text: string): string {
  if (text.length <= MAX_PROGRESS_MESSAGE) return text;
  let end = MAX_PROGRESS_MESSAGE - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** Progress notifications a streamed call sends at once, then how many a second (a token bucket). */
export const PROGRESS_BURST = 20;
export const PROGRESS_PER_SECOND = 10;

/**
 * A streamed answer's events as progress notifications: at most PROGRESS_BURST at once and
 * PROGRESS_PER_SECOND after, the text of the ones held back joined to the next (so the messages,
 * put together, are still the whole text: the agent shows a digest that way), and a held text sent
 * as soon as it reaches MAX_PROGRESS_MESSAGE characters, or with `flush`. Before, each event was a
 * notification: an upstream of 600,000 small events made as many, each stored in the session's
 * log (with Redis 6 million commands, 132 s for a call whose deadline was 30 s).
 */
function progressReporter(
  onProgress: ((progress: number, message: string) => void) | undefined,
): (progress: number, text: string, flush?: boolean) => void {
  let tokens = PROGRESS_BURST;
  let at = performance.now();
  let held = '';
  let heldProgress = 0;
  const send = (progress: number, text: string) => {
    tokens = Math.max(0, tokens - 1);
    onProgress?.(progress, progressMessage(text));
  };
  return (progress, text, flush = false) => {
    if (!onProgress) return;
    // Held texts join while they fit one message; an event longer than that goes alone, cut.
    if (held !== '' && held.length + text.length > MAX_PROGRESS_MESSAGE) {
      send(heldProgress, held);
      held = '';
    }
    // A flush carries no text of its own: what it sends is numbered by the last event in it.
    if (text !== '') {
      held += text;
      heldProgress = progress;
    }
    if (held === '') return;
    const now = performance.now();
    tokens = Math.min(PROGRESS_BURST, tokens + ((now - at) * PROGRESS_PER_SECOND) / 1000);
    at = now;
    if (tokens < 1 && !flush) return;
    send(heldProgress, held);
    held = '';
  };
}

/**
 * Why a request cannot carry credentials (nothing is then sent), and whether trying again may
 * help; `connect`: the user has not connected their account yet, and where to.
 */
type AuthProblem = { text: string; retryable: boolean; connect?: ConnectNeeded | undefined };

export class UpstreamCaller {
  readonly #client: HttpClient;
  readonly #apiKey: string | undefined;
  readonly #maxUploadBytes: number;
  readonly #identity: UpstreamIdentity;
  readonly #forward: string[];

  constructor(client: HttpClient, options: UpstreamCallerOptions = {}) {
    this.#client = client;
    this.#apiKey = options.apiKey;
    this.#maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
    this.#identity = options.identity ?? { mode: 'service' };
    this.#forward = forwardable(options.forwardHeaders ?? []);
  }

  async call(tool: Tool, args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult> {
    const b = tool.binding;
    const ledger = new Ledger();
    const started = performance.now();
    const headers: Record<string, string> = { accept: b.accept };
    const query: Record<string, string[]> = {};
    const cookies: string[] = [];
    // mutation testing: from here
    let path = b.path;
    for (const p of b.params) {
      const value = args[p.arg];
      if (value === undefined) continue;
      if (p.in === 'path') {
        const segment = pathValue(p, value);
        // '.' and '..' cannot be encoded safely (URL parsers treat %2E%2E as '..'): refused.
        if (segment === '' || segment === '.' || segment === '..') {
          return this.#error(`path parameter ${p.name} cannot be empty, '.' or '..'`, false, ledger, started, ctx);
        }
        path = path.replace(`{${p.name}}`, segment);
      } else if (p.in === 'query') {
        for (const [name, text] of queryPairs(p, value)) {
          // An exploded object's keys become query names: the model's choice, so checked like a
          // declared parameter (never one that carries the key, never another parameter's).
          if (name !== p.name && !name.startsWith(`${p.name}[`)) {
            const refused =
              queryNameRefusal(name, b.auth) ??
              (b.params.some((other) => other !== p && other.in === 'query' && other.name === name)
                ? `it is the operation's own parameter ${name}; set it by that name`
                : undefined);
            if (refused !== undefined) {
              return this.#error(
                `query name '${name}' from argument ${p.arg} is not the model's to set: ${refused}`,
                false,
                ledger,
                started,
                ctx,
              );
            }
          }
          query[name] = [...(query[name] ?? []), text];
        }
      } else if (p.in === 'cookie') {
        cookies.push(...cookiePairs(p, value));
      } else {
        const text = headerValue(p, value);
        if (/[\r\n]/.test(text))
          return this.#error(`header ${p.name} must not contain line breaks`, false, ledger, started, ctx);
        headers[p.name.toLowerCase()] = text;
      }
    }
    // Only the operation's own cookie parameters: a caller cannot supply a Cookie header.
    if (cookies.length > 0) headers.cookie = cookies.join('; ');
    const authorized = this.#authorize(tool, ctx, headers, query);
    // Only a token exchange waits: the common call takes its answer without an await.
    const problem = authorized instanceof Promise ? await authorized : authorized;
    if (problem) {
      const refused = this.#error(problem.text, problem.retryable, ledger, started, ctx);
      if (problem.connect) refused.connect = problem.connect;
      return refused;
    }
    let encoded: EncodedBody;
    try {
      encoded = b.body ? await encodeBody(b.body, args, this.#maxUploadBytes) : undefined;
    } catch (error) {
      if (error instanceof BodyError) return this.#error(error.message, false, ledger, started, ctx);
      throw error;
    }
    // The caller's key for this write (tools/writes.ts), when the upstream dedupes by one; else a
    // write the operation lets us make idempotent gets a key, so it may be retried safely.
    if (ctx.idempotencyKey !== undefined) headers['idempotency-key'] = ctx.idempotencyKey;
    else if (b.idempotencyKeyArg && headers['idempotency-key'] === undefined) headers['idempotency-key'] = randomUUID();
    // mutation testing: to here

    const common: Parameters<HttpClient['request']>[0] = {
      method: b.method,
      path,
      route: b.path,
      query,
      headers,
      signal: ctx.signal,
      deadlineMs: ctx.deadlineMs,
      ledger,
      traceContext: ctx.traceContext,
    };
    // Set when there, not spread from an empty object: two copies less a call.
    // An operation the spec marks idempotent (x-mcp annotations) may be retried even as a POST.
    if (tool.annotations.idempotentHint) common.idempotent = true;
    if (encoded && 'json' in encoded) common.json = encoded.json;
    else if (encoded) common.body = encoded.body;
    try {
      if (b.streams && ctx.onProgress) return await this.#stream(tool, common, ctx, ledger, started);
      const response = await this.#client.request(common);
      const result = this.#result(
        tool,
        path,
        response.status,
        response.data,
        response.headers['content-type'],
        ctx,
        ledger,
        started,
        response.text,
        response.bytes,
      );
      // A job accepted for later: the tool layer makes a task of it or follows it (tools/tasks.ts).
      const accepted = acceptedOf(response.status, response.headers, this.#client.baseUrl);
      if (accepted) result.accepted = accepted;
      return result;
    } catch (error) {
      if (!(error instanceof HttpClientError)) throw error;
      // The user's connected token no longer works: dropped, so that their next call asks them to connect again.
      if (this.#identity.mode === 'connect' && error instanceof APIError && error.status === 401 && ctx.caller) {
        const used = headers.authorization?.replace(/^Bearer /, '') ?? '';
        await this.#identity.flow.forget(ctx.caller.subject, this.#identity.upstream, used).catch(() => undefined);
      }
      // A write that cannot be repeated safely, sent, and no answer: it may or may not have happened.
      const unsafe = !tool.annotations.idempotentHint && headers['idempotency-key'] === undefined;
      if (unsafe && !tool.annotations.readOnlyHint && ledger.attempts.length > 0 && mayHaveReached(error)) {
        const text = `${describeError(error, 'the request may have reached the API, so whether it took effect is unknown')}: check before repeating it (a read), or call with _meta["agentwire.dev/idempotencyKey"] so a repeat is safe`;
        return { ...this.#error(text, false, ledger, started, ctx), outcomeUnknown: true };
      }
      // The wait is the model's to keep only when trying again may help at all.
      const retry = mayRetry(error);
      return this.#error(describeError(error), retry, ledger, started, ctx, retry ? upstreamWaitMs(error) : undefined);
    }
  }

  // mutation testing: from here
  /**
   * Puts the credentials on a request to this upstream, after the caller's own headers it allows
   * (they win over a model's argument, never over the credentials); or says why there are none
   * (nothing is then sent).
   */
  #authorize(
    tool: Tool,
    ctx: CallContext,
    headers: Record<string, string>,
    query: Record<string, string[]>,
  ): AuthProblem | undefined | Promise<AuthProblem | undefined> {
    copyForwarded(this.#forward, ctx.headers, headers);
    if (this.#identity.mode === 'exchange') return this.#userToken(tool, ctx, headers);
    if (this.#identity.mode === 'connect') return this.#connectedToken(tool, ctx, headers);
    for (const auth of tool.binding.auth) {
      if (!this.#apiKey) break;
      if (auth.type === 'bearer') headers.authorization = `Bearer ${this.#apiKey}`;
      else if (auth.type === 'basic') headers.authorization = `Basic ${basicCredentials(this.#apiKey)}`;
      else if (auth.type === 'header') headers[auth.name.toLowerCase()] = this.#apiKey;
      else query[auth.name] = [this.#apiKey];
    }
    return undefined;
  }
  // mutation testing: to here

  /** A status URL's path under this upstream's base URL; undefined when it is elsewhere. */
  statusPath(location: string): string | undefined {
    return pathUnder(location, this.#client.baseUrl)?.path;
  }

  /**
   * One look at a job the upstream accepted (upstream/jobs.ts reads the answers): GET its status
   * URL with the tool's credentials, following redirects to the result. A failed look that may
   * pass (a 5xx, a timeout) leaves the job working; the job's own failure is a done isError
   * result; what the gateway cannot follow (another origin, a status word it does not know) is broken.
   */
  async poll(tool: Tool, location: string, ctx: CallContext): Promise<JobState> {
    const ledger = new Ledger();
    const started = performance.now();
    // The result is another representation than the operation's own answer: no output schema.
    const { outputSchema: _own, ...final } = tool;
    let url = location;
    for (let hop = 0; ; hop++) {
      const where = pathUnder(url, this.#client.baseUrl);
      if (!where) {
        return {
          state: 'broken',
          message: `the upstream's status URL ${url.slice(0, 300)} is not under its base URL ${this.#client.baseUrl}; the gateway sends the upstream's credentials to the upstream only, so it cannot follow the job there`,
        };
      }
      const headers: Record<string, string> = { accept: 'application/json, */*;q=0.5' };
      const problem = await this.#authorize(tool, ctx, headers, where.query);
      if (problem) return { state: 'done', result: this.#error(problem.text, problem.retryable, ledger, started, ctx) };
      let response: Awaited<ReturnType<HttpClient['request']>>;
      try {
        response = await this.#client.request({
          method: 'GET',
          path: where.path,
          route: `${tool.binding.path} (status)`,
          query: where.query,
          headers,
          signal: ctx.signal,
          deadlineMs: ctx.deadlineMs,
          ledger,
          traceContext: ctx.traceContext,
        });
      } catch (error) {
        if (!(error instanceof HttpClientError)) throw error;
        // Only the status URL's own refusal (a 4xx but a rate limit, a 429 or GitHub's 403: gone,
        // forbidden) ends the job; a check that did not get an answer (a timeout, a dropped
        // connection, no retry budget left, a 5xx) says nothing of it, and the next look may.
        if (
          error instanceof APIError &&
          error.status >= 400 &&
          error.status < 500 &&
          error.type !== 'rate_limit_error'
        ) {
          const text = `the job's status URL ${where.path} answered: ${describeError(error)}`;
          return { state: 'done', result: this.#error(text, false, ledger, started, ctx) };
        }
        return {
          state: 'working',
          message: `the status check failed, the job may still be running: ${describeError(error)}`,
          retryAfterMs: error instanceof APIError ? error.retryAfterMs : undefined,
        };
      }
      const retryAfterMs = serverRetryDelay(response.headers, Date.now());
      if (response.status >= 300 && response.status < 400) {
        const next = response.headers.location;
        if (typeof next !== 'string' || hop >= MAX_STATUS_REDIRECTS) {
          return {
            state: 'broken',
            message: `the job's status URL ${where.path} answered ${response.status} ${typeof next === 'string' ? `after ${MAX_STATUS_REDIRECTS} redirects already (the most followed)` : 'without a Location'}`,
          };
        }
        try {
          url = new URL(next, url).href;
        } catch {
          return {
            state: 'broken',
            message: `the job's status URL ${where.path} redirected to '${next.slice(0, 200)}', which is not a URL`,
          };
        }
        continue;
      }
      // Where a redirect led is the result itself, whatever a `status` field in it says.
      const word = hop > 0 ? undefined : statusWordOf(response.data);
      if (response.status === 202 || word?.word === 'working') {
        return { state: 'working', message: progressLine(response.data, word?.said ?? 'accepted'), retryAfterMs };
      }
      if (word === undefined || word.word === 'done') {
        const type = response.headers['content-type'];
        return {
          state: 'done',
          result: this.#result(
            final,
            where.path,
            response.status,
            response.data,
            type,
            ctx,
            ledger,
            started,
            response.text,
            response.bytes,
          ),
        };
      }
      if (word.word === 'failed') {
        const text = `the upstream job failed (status '${word.said}'): ${failureText(response.data)}`;
        return { state: 'done', result: this.#error(text, false, ledger, started, ctx) };
      }
      if (word.word === 'cancelled') return { state: 'cancelled', message: progressLine(response.data, word.said) };
      return {
        state: 'broken',
        message: `the job's status URL ${where.path} answered status '${word.said.slice(0, 100)}', which the gateway does not know: it reads running, pending, queued and the like as working; completed, succeeded, done as done; failed, error as failed; cancelled as cancelled`,
      };
    }
  }

  /**
   * identity: exchange: a token for this upstream, for the caller, with the scopes the tool
   * declares, put in Authorization; or why there is none (nothing is then sent upstream).
   */
  async #userToken(tool: Tool, ctx: CallContext, headers: Record<string, string>): Promise<AuthProblem | undefined> {
    const identity = this.#identity as Extract<UpstreamIdentity, { mode: 'exchange' }>;
    const token = ctx.caller?.token;
    if (!token) {
      return {
        text: `tool ${tool.name} calls its API as the signed-in user (identity: exchange), and this call has no signed-in user: call it through the gateway's HTTP endpoint with an OAuth access token`,
        retryable: false,
      };
    }
    try {
      const exchanged = await identity.exchanger.exchange(token, identity.audience, tool.binding.scopes);
      headers.authorization = `Bearer ${exchanged.accessToken}`;
      return undefined;
    } catch (error) {
      if ((error as Error).name === 'TokenExchangeRefusedError') {
        const refusal = error as TokenExchangeRefusedError;
        const scopes = tool.binding.scopes.length > 0 ? ` with the scope ${tool.binding.scopes.join(' ')}` : '';
        return {
          text: `tool ${tool.name} was not called: the authorization server ${identity.issuer} would not give a token for ${identity.audience}${scopes} for you (${refusal.error}${refusal.description ? `: ${refusal.description}` : ''}); nothing was sent upstream. Retrying the same call will not help`,
          retryable: false,
        };
      }
      if ((error as Error).name === 'AuthServerUnavailableError') {
        return {
          text: `tool ${tool.name} was not called: the authorization server could not exchange your token for one for ${identity.audience} (${(error as Error).message}); nothing was sent upstream. Trying again later may help`,
          retryable: true,
        };
      }
      throw error;
    }
  }

  /**
   * identity: connect: the user's own token for this upstream in Authorization; or, when they have
   * not connected it yet, the link that connects it (nothing is then sent upstream).
   */
  async #connectedToken(
    tool: Tool,
    ctx: CallContext,
    headers: Record<string, string>,
  ): Promise<AuthProblem | undefined> {
    const identity = this.#identity as Extract<UpstreamIdentity, { mode: 'connect' }>;
    const caller = ctx.caller;
    if (!caller || caller.token === undefined) {
      return {
        text: `tool ${tool.name} calls ${identity.upstream} with each user's own ${identity.upstream} account, connected in their browser (identity: connect), and this call has no signed-in user: call it through the gateway's HTTP endpoint with an OAuth access token`,
        retryable: false,
      };
    }
    try {
      let token = await identity.flow.tokenFor(caller.subject, identity.upstream);
      // A 2026-07-28 client answered the link: declined, nothing is sent; accepted, the user may
      // still be in their browser, so the call waits for them (up to half its deadline, 60 s at most).
      if (!token && (ctx.connectAnswer === 'decline' || ctx.connectAnswer === 'cancel')) {
        return {
          text: `tool ${tool.name} was not called: you did not connect your ${identity.upstream} account (${ctx.connectAnswer}); nothing was sent upstream`,
          retryable: false,
        };
      }
      if (!token && ctx.connectAnswer === 'accept') {
        const waitMs = Math.min(ctx.deadlineMs / 2, MAX_CONNECT_WAIT_MS);
        token = await identity.flow.waitForToken(caller.subject, identity.upstream, waitMs, ctx.signal);
      }
      if (token) {
        headers.authorization = `Bearer ${token.accessToken}`;
        return undefined;
      }
      const needed = await identity.flow.begin(caller.subject, identity.upstream, ctx.sessionId);
      return {
        text: `tool ${tool.name} was not called: ${needed.message} The link (good for a few minutes, for you only): ${needed.url}`,
        retryable: false,
        connect: needed,
      };
    } catch (error) {
      if ((error as Error).name === 'AuthServerUnavailableError') {
        return {
          text: `tool ${tool.name} was not called: your ${identity.upstream} token needs refreshing, and ${identity.upstream}'s token endpoint could not do it (${(error as Error).message}); nothing was sent upstream. Trying again later may help`,
          retryable: true,
        };
      }
      return {
        text: `tool ${tool.name} was not called: the store of connected accounts could not be reached (${(error as Error).message}); nothing was sent upstream. Trying again shortly may help`,
        retryable: true,
      };
    }
  }

  async #stream(
    tool: Tool,
    common: Parameters<HttpClient['stream']>[0],
    ctx: CallContext,
    ledger: Ledger,
    started: number,
  ): Promise<ToolResult> {
    let progress = 0;
    let last: SseEvent | undefined;
    const texts: string[] = [];
    const report = progressReporter(ctx.onProgress);
    for await (const event of this.#client.stream({
      ...common,
      headers: { ...common.headers, accept: 'text/event-stream' },
    })) {
      last = event;
      progress++;
      let message = event.data;
      try {
        const parsed = JSON.parse(event.data) as { text?: unknown };
        if (typeof parsed?.text === 'string') message = parsed.text;
      } catch {
        // Not JSON: the data itself is the message.
      }
      // The closing event carries the result, not more of the text: its progress just says so.
      if (event.event === 'done') {
        report(progress, '', true);
        ctx.onProgress?.(progress, 'done');
        continue;
      }
      texts.push(message);
      // A progress message is a line to show, and is stored in the session's event log.
      report(progress, message);
    }
    report(progress, '', true);
    let data: unknown = texts.join('');
    if (last) {
      try {
        data = JSON.parse(last.data);
      } catch {
        // The stream's text is the result.
      }
    }
    return this.#result(tool, common.path, 200, data, 'application/json', ctx, ledger, started);
  }

  /**
   * The upstream report of a call, and who made it: the upstream identity, and the signed-in
   * caller's subject when there is one. Said here, where every result is made, rather than by
   * a wrapper around the call (an async frame less a call); so the result of a job followed to
   * its end says who called too, as a direct answer does.
   */
  #report(
    ledger: Ledger,
    started: number,
    status: number | null,
    ctx: CallContext,
    retryable?: boolean,
  ): UpstreamReport {
    const report = upstreamMeta(ledger, started, status);
    // In the order reports have always had their keys: retryable (errors), then who called.
    if (retryable !== undefined) report.retryable = retryable;
    report.identity = this.#identity.mode;
    if (ctx.caller?.subject) report.subject = ctx.caller.subject.slice(0, 255);
    return report;
  }

  /** A call that failed (or was never sent), as a result the model reads; its report says whether to try again. */
  #error(
    text: string,
    retryable: boolean,
    ledger: Ledger,
    started: number,
    ctx: CallContext,
    retryAfterMs?: number,
  ): ToolResult {
    const report = this.#report(ledger, started, ledger.attempts.at(-1)?.status ?? null, ctx, retryable);
    if (retryAfterMs !== undefined) report.retryAfterMs = retryAfterMs;
    return { content: [{ type: 'text', text }], isError: true, _meta: { [UPSTREAM_REPORT_KEY]: report } };
  }

  #result(
    tool: Tool,
    path: string,
    status: number,
    data: unknown,
    contentType: string | string[] | undefined,
    ctx: CallContext,
    ledger: Ledger,
    started: number,
    bodyText?: string,
    bodyBytes?: Buffer,
  ): ToolResult {
    const meta = { [UPSTREAM_REPORT_KEY]: this.#report(ledger, started, status, ctx) };
    const type = String((Array.isArray(contentType) ? contentType[0] : contentType) ?? '').split(';')[0] ?? '';
    const result: ToolResult = { content: [], isError: false, _meta: meta };
    if (Buffer.isBuffer(data)) {
      const mimeType = type || 'application/octet-stream';
      result.content.push(
        mimeType.startsWith('image/')
          ? { type: 'image', data: data.toString('base64'), mimeType }
          : mimeType.startsWith('audio/') && ctx.audio
            ? { type: 'audio', data: data.toString('base64'), mimeType }
            : // Other bytes travel as an embedded resource, named by the URL they came from.
              {
                type: 'resource',
                resource: { uri: `${this.#client.baseUrl}${path}`, mimeType, blob: data.toString('base64') },
              },
      );
      return result;
    }
    // Before anything recursive (the redaction, the output check, a copy) touches the answer. A
    // text of at most 2 x MAX_ANSWER_DEPTH characters cannot nest that deep: not walked (most
    // answers; office_days' walk was 2 k instructions of the gateway's 311 k a call).
    if (
      typeof data === 'object' &&
      data !== null &&
      !(bodyText !== undefined && bodyText.length <= 2 * MAX_ANSWER_DEPTH) &&
      nestsDeeper(data, MAX_ANSWER_DEPTH)
    ) {
      result.isError = true;
      result.content.push({
        type: 'text',
        text: `upstream answer too deep: it nests deeper than MAX_ANSWER_DEPTH (${MAX_ANSWER_DEPTH} levels) at ${tooDeepAt(data, MAX_ANSWER_DEPTH)}; it was not passed on. Ask for less (a narrower filter, fewer expansions); retrying the same call will not help`,
      });
      return result;
    }
    // No body (204, or an empty 200): a success with no content.
    if (data !== undefined) {
      // JSON as the upstream wrote it (its exact integers too), not written again from the parsed value.
      const text = typeof data === 'string' ? data : (bodyText ?? JSON.stringify(data));
      result.content.push({ type: 'text', text });
    }
    if (ctx.structured && tool.outputSchema) {
      // Checked against the advertised schema by the tool layer (tools/operation-call.ts) before it is sent.
      const wrapped = tool.binding.output.kind === 'json' && tool.binding.output.wrapped;
      result.structuredContent = data === undefined ? {} : wrapped ? { result: data } : data;
      // Sent as the upstream's own text unless something changes it (common/raw-json.ts).
      if (bodyText !== undefined && data !== undefined && typeof data !== 'string') {
        keepRawJson(result.structuredContent, bodyText, bodyBytes, wrapped);
      }
    }
    return result;
  }
}
