// The client: one retry loop shared by JSON calls, event streams and the fetch adapter.
// Per attempt it checks the budget, sends through undici with a timeout that covers the
// whole response, records the attempt in the ledger, and decides whether and how long to
// wait before the next one (never past the deadline, never for an unsafe write).
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { compileValidator, type Validate } from '@agentwire/schemas/validation';
import type { Static, TSchema } from 'typebox';
import type { Dispatcher } from 'undici';
import type { Budget } from './budget.js';
import { type Clock, systemClock } from './clock.js';
import { APIError } from './errors/api-errors.js';
import type { HttpClientError } from './errors/client-error.js';
import {
  DeadlineExceededError,
  InvalidResponseError,
  StreamInterruptedError,
  TimeoutError,
} from './errors/local-errors.js';
import { readEvents, type SseEvent, StreamIdleError } from './event-stream.js';
import { classifyFailure, errorFromResponse, firstHeader, type TimerReason } from './failure.js';
import { flatHeaders, toWebResponse } from './fetch-response.js';
import type { AttemptRecord, Ledger, WaitReason } from './ledger.js';
import { RetryBudget, type RetryBudgetOptions } from './retry-budget.js';
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, isReplaySafe } from './retry-policy.js';

/**
 * Aborts one attempt. undici takes an EventEmitter that emits 'abort' as a signal; an
 * AbortController costs 10 to 20 µs to make on Node 20 (its signal is a slow object), and the
 * client makes one per attempt: a profile of the gateway under load showed it as the largest
 * cost of ours per tool call.
 */
class AttemptAbort extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

// undici takes about 120 ms to load (its entry loads fetch, WebSocket, caches and mocks too).
// It is loaded with the first request, so a program that makes a client at start-up (the
// gateway, before it answers initialize) does not wait for it.
const require = createRequire(import.meta.url);
let undiciModule: typeof import('undici') | undefined;
function loadUndici(): typeof import('undici') {
  undiciModule ??= require('undici') as typeof import('undici');
  return undiciModule;
}

export interface AuthOptions {
  /** The secret itself. Prefer `env`: the key then never passes through your code. */
  key?: string | undefined;
  /** Read the key from this environment variable (when `key` is not given). */
  env?: string | undefined;
  /** `Authorization: Bearer <key>` (default) or `x-api-key: <key>`. */
  scheme?: 'bearer' | 'x-api-key' | undefined;
}

export interface ClientOptions {
  /** Every path is resolved against this, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  auth?: AuthOptions | undefined;
  /** Headers sent with every request. */
  headers?: Record<string, string> | undefined;
  /** More secrets (keys sent per call) to scrub from anything the server sends back. */
  redact?: readonly string[] | undefined;
  /** Per-attempt timeout covering the whole response, body included. Default 30 000 ms. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt. Default 2, as in the official SDKs. */
  maxRetries?: number | undefined;
  backoff?: Partial<BackoffOptions> | undefined;
  /** A server that asks to wait longer than this is not waited for. Default 60 000 ms. */
  maxRetryAfterMs?: number | undefined;
  /** The retry budget shared by this client's calls; `false` turns it off. */
  retryBudget?: RetryBudget | Partial<RetryBudgetOptions> | false | undefined;
  /** An overall deadline (ms since the epoch) for every call of this client, e.g. a run's. */
  deadline?: number | undefined;
  ledger?: Ledger | undefined;
  budget?: Budget | undefined;
  /** The cost of one attempt, for the budget. Default: the call's `cost`, else 0. */
  costOf?: ((call: { method: string; path: string }) => number) | undefined;
  /** Names this client in the ledger ('api', 'gateway', ...). Default 'http'. */
  layer?: string | undefined;
  /** Send an Idempotency-Key on every POST and PATCH that has none ('auto'), or only when asked. */
  idempotencyKeys?: 'auto' | 'manual' | undefined;
  /** Streams fail when no event arrives for this long. Default 30 000 ms. */
  streamIdleTimeoutMs?: number | undefined;
  /** How many times one stream may resume with Last-Event-ID. Default 3. */
  maxResumes?: number | undefined;
  clock?: Clock | undefined;
  random?: (() => number) | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** Query parameters; an array becomes repeated parameters (`tag=a&tag=b`). */
export type Query = Record<
  string,
  string | number | boolean | null | undefined | ReadonlyArray<string | number | boolean>
>;

export interface CallOptions<S extends TSchema | undefined = undefined> {
  method?: string | undefined;
  /** The path below baseUrl, starting with '/'. */
  path: string;
  /** The route template for the ledger, e.g. '/emails/{id}'. */
  route?: string | undefined;
  query?: Query | undefined;
  /** A value sent as JSON. */
  json?: unknown;
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  /** An absolute deadline (ms since the epoch); the earlier of this and the client's applies. */
  deadline?: number | undefined;
  /** A deadline relative to now, in ms. */
  deadlineMs?: number | undefined;
  /** A key for this logical call, or `true` to generate one; reused on every attempt. */
  idempotencyKey?: string | true | undefined;
  /** Declare that repeating this call is harmless (or not), overriding the method's default. */
  idempotent?: boolean | undefined;
  /** This call's cost per attempt, for the budget. */
  cost?: number | undefined;
  /** Validate a 2xx JSON body against this schema; `data` is then typed by it. */
  schema?: S;
  /** A ledger for this call alone (the client's ledger, if any, records it too). */
  ledger?: Ledger | undefined;
}

export interface StreamOptions extends Omit<CallOptions, 'schema'> {
  idleTimeoutMs?: number | undefined;
  maxResumes?: number | undefined;
}

export interface HttpResponse<T> {
  status: number;
  headers: IncomingHttpHeaders;
  data: T;
  requestId: string | undefined;
  /** How many attempts the call took. */
  attempts: number;
}

type Data<S> = S extends TSchema ? Static<S> : unknown;

interface Wait {
  ms: number;
  reason: WaitReason | null;
}

const NO_WAIT: Wait = { ms: 0, reason: null };

interface Call {
  method: string;
  path: string;
  route: string;
  url: string;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
  idempotencyKey: string | undefined;
  replaySafe: boolean;
  deadline: number | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  maxRetries: number;
  cost: number;
  /** Per-call ledger, receiving this call's records besides the client's ledger. */
  ledger: Ledger | undefined;
}

/** Marks a stream body destroyed because the call's deadline passed. */
class DeadlineReached extends Error {}

/** What one attempt produced. */
type Sent =
  | { kind: 'ok'; status: number; headers: IncomingHttpHeaders; buffer: Buffer }
  | {
      kind: 'stream';
      status: number;
      headers: IncomingHttpHeaders;
      body: Readable;
      finish: Finish;
      /** What is left of the attempt's timeout once the headers arrived. */
      timeLeftMs: number;
    }
  | {
      kind: 'error';
      error: HttpClientError;
      /** False when the attempt ended before anything was sent (abort, deadline, budget). */
      sent: boolean;
      response?: { status: number; headers: IncomingHttpHeaders; buffer: Buffer };
    };

/** Closes a streaming attempt's ledger record once its body has ended. */
type Finish = (errorType: string | null, bytesReceived: number) => void;

interface Executed {
  sent: Exclude<Sent, { kind: 'error' }>;
  attempt: number;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  maxRetries: 2,
  maxRetryAfterMs: 60_000,
  streamIdleTimeoutMs: 30_000,
  maxResumes: 3,
};

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`${name} must be a whole number >= 0, got ${String(v)}`);
  return v;
}

/**
 * A resilient HTTP client for agents: timeouts, deadlines, retries with backoff and
 * Retry-After, idempotency keys, a retry budget, a ledger and a budget.
 * @example
 *   const client = new HttpClient({ baseUrl: 'http://127.0.0.1:8080', auth: { env: 'TOY_API_KEY' } });
 *   const page = await client.get('/emails', { query: { urgent: true }, schema: EmailPage });
 */
export class HttpClient {
  readonly baseUrl: string;
  readonly #origin: string;
  /** Strings scrubbed from anything the server sends back (a server may echo the key). */
  readonly #secrets: string[];
  readonly #authHeader: [string, string] | undefined;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #backoff: BackoffOptions;
  readonly #maxRetryAfterMs: number;
  readonly #retryBudget: RetryBudget | undefined;
  readonly #deadline: number | undefined;
  readonly #ledger: Ledger | undefined;
  readonly #budget: Budget | undefined;
  readonly #costOf: ((call: { method: string; path: string }) => number) | undefined;
  readonly #layer: string;
  readonly #autoKeys: boolean;
  readonly #idleTimeoutMs: number;
  readonly #maxResumes: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  /** Made on the first request (see loadUndici), unless the caller gave one. */
  #dispatcher: Dispatcher | undefined;
  readonly #ownsDispatcher: boolean;
  readonly #validators = new WeakMap<object, Validate<unknown>>();
  #throttled = false;

  constructor(options: ClientOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be an absolute http(s) URL, got '${String(options.baseUrl)}'`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`baseUrl must use http or https, got '${base.protocol}'`);
    }
    if (base.username || base.password || base.search) {
      throw new TypeError('baseUrl must not carry credentials or a query string; pass the key with `auth`');
    }
    this.baseUrl = base.href.replace(/\/$/, '');
    this.#origin = base.origin;
    const key = options.auth?.key ?? (options.auth?.env ? process.env[options.auth.env] : undefined);
    if (options.auth?.env && !key) {
      throw new TypeError(`auth: the environment variable ${options.auth.env} is not set`);
    }
    this.#secrets = [...(key ? [key] : []), ...(options.redact ?? [])].filter((v) => v.length > 0);
    this.#authHeader = key
      ? options.auth?.scheme === 'x-api-key'
        ? ['x-api-key', key]
        : ['authorization', `Bearer ${key}`]
      : undefined;
    this.#headers = Object.fromEntries(Object.entries(options.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    this.#timeoutMs = positiveInteger('timeoutMs', options.timeoutMs, DEFAULTS.timeoutMs);
    this.#maxRetries = positiveInteger('maxRetries', options.maxRetries, DEFAULTS.maxRetries);
    this.#backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#maxRetryAfterMs = positiveInteger('maxRetryAfterMs', options.maxRetryAfterMs, DEFAULTS.maxRetryAfterMs);
    this.#retryBudget =
      options.retryBudget === false
        ? undefined
        : options.retryBudget instanceof RetryBudget
          ? options.retryBudget
          : new RetryBudget(options.retryBudget ?? {});
    this.#deadline = options.deadline;
    this.#ledger = options.ledger;
    this.#budget = options.budget;
    this.#costOf = options.costOf;
    this.#layer = options.layer ?? 'http';
    this.#autoKeys = options.idempotencyKeys === 'auto';
    this.#idleTimeoutMs = positiveInteger(
      'streamIdleTimeoutMs',
      options.streamIdleTimeoutMs,
      DEFAULTS.streamIdleTimeoutMs,
    );
    this.#maxResumes = positiveInteger('maxResumes', options.maxResumes, DEFAULTS.maxResumes);
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#dispatcher = options.dispatcher;
    this.#ownsDispatcher = options.dispatcher === undefined;
  }

  /**
   * Sends a request and reads the whole response: JSON bodies are parsed (and validated with
   * `schema`), binary ones (image, audio, video, octet-stream, PDF, ZIP) come back as a Buffer,
   * others as text.
   */
  async request<S extends TSchema | undefined = undefined>(options: CallOptions<S>): Promise<HttpResponse<Data<S>>> {
    const call = this.#prepare(options);
    const { sent, attempt } = await this.#execute(call, 'buffered', 1, NO_WAIT);
    if (sent.kind !== 'ok') throw new Error('unreachable: buffered call returned a stream');
    const data = this.#parseBody(call, sent, options.schema);
    return {
      status: sent.status,
      headers: sent.headers,
      data: data as Data<S>,
      requestId: firstHeader(sent.headers, 'request-id'),
      attempts: attempt,
    };
  }

  get<S extends TSchema | undefined = undefined>(path: string, options: Omit<CallOptions<S>, 'path' | 'method'> = {}) {
    return this.request<S>({ ...options, path, method: 'GET' } as CallOptions<S>);
  }

  post<S extends TSchema | undefined = undefined>(
    path: string,
    json: unknown,
    options: Omit<CallOptions<S>, 'path' | 'method' | 'json'> = {},
  ) {
    return this.request<S>({ ...options, path, json, method: 'POST' } as CallOptions<S>);
  }

  /**
   * Streams server-sent events. After a dropped connection it resumes with Last-Event-ID when
   * the server gave event ids and the call is safe to repeat; events the server sends again
   * are dropped. A stream that cannot resume and already delivered events is not silently
   * restarted (StreamInterruptedError). The deadline covers the whole stream.
   */
  async *stream(options: StreamOptions): AsyncGenerator<SseEvent> {
    const call = this.#prepare({ ...options, headers: { accept: 'text/event-stream', ...options.headers } });
    const idleTimeoutMs = options.idleTimeoutMs ?? this.#idleTimeoutMs;
    const maxResumes = options.maxResumes ?? this.#maxResumes;
    const delivered = new Set<string>();
    let lastEventId: string | undefined;
    let reconnectMs = 1000;
    let count = 0;
    let resumes = 0;
    let attempt = 1;
    let wait = NO_WAIT;
    for (;;) {
      const resumeHeaders = lastEventId === undefined ? {} : { 'last-event-id': lastEventId };
      const { sent, attempt: used } = await this.#execute(
        { ...call, headers: { ...call.headers, ...resumeHeaders } },
        'stream',
        attempt,
        wait,
        resumes > 0 ? lastEventId : undefined,
      );
      if (sent.kind !== 'stream') throw new Error('unreachable: stream call returned a buffer');
      const remaining = this.#remaining(call);
      const deadlineTimer = Number.isFinite(remaining)
        ? setTimeout(() => sent.body.destroy(new DeadlineReached()), Math.max(0, remaining))
        : undefined;
      let bytes = 0;
      let finished = false;
      try {
        for await (const event of readEvents(sent.body, {
          idleTimeoutMs,
          onRetry: (ms) => {
            reconnectMs = Math.min(ms, this.#maxRetryAfterMs);
          },
          onBytes: (n) => {
            bytes += n;
          },
        })) {
          if (event.id !== undefined && event.id !== '' && delivered.has(event.id)) continue; // sent again after a resume
          // An empty id resets the stream's last event id, as in the SSE standard.
          if (event.id !== undefined) lastEventId = event.id === '' ? undefined : event.id;
          if (event.id) {
            delivered.add(event.id);
            if (delivered.size > 10_000) delivered.delete(delivered.values().next().value as string);
          }
          count++;
          yield event;
        }
        finished = true;
        sent.finish(null, bytes);
        return;
      } catch (cause) {
        finished = true;
        const error =
          cause instanceof StreamIdleError
            ? new TimeoutError(`no event within the ${idleTimeoutMs} ms idle timeout`, {
                method: call.method,
                path: call.path,
                timeoutMs: idleTimeoutMs,
              })
            : cause instanceof DeadlineReached
              ? new DeadlineExceededError(`the deadline passed after ${count} events`, {
                  method: call.method,
                  path: call.path,
                })
              : classifyFailure(cause, {
                  ...call,
                  callerSignal: call.signal,
                  timer: undefined,
                  timeoutMs: idleTimeoutMs,
                });
        sent.finish(error.type, bytes);
        error.attempts = used;
        if (!error.retryable) throw error;
        if (error.retryable) this.#retryBudget?.onFailure();
        attempt = used + 1;
        const canResume = lastEventId !== undefined && call.replaySafe;
        if (canResume && resumes < maxResumes) {
          resumes++;
          const next =
            this.#budgetRefusal(call, error) ??
            this.#clampToDeadline(call, { ms: reconnectMs, reason: 'sse_retry' }, error);
          if (next instanceof Error) {
            next.attempts = used;
            throw next;
          }
          wait = next;
          continue;
        }
        if (count > 0) {
          const why =
            lastEventId === undefined
              ? 'sent no event ids to resume from'
              : !call.replaySafe
                ? 'is not safe to repeat (send an Idempotency-Key or declare it idempotent)'
                : `was resumed ${resumes} times already`;
          throw new StreamInterruptedError(`the stream broke after ${count} events and ${why} (${error.message})`, {
            method: call.method,
            path: call.path,
            eventsDelivered: count,
            cause: error,
            attempts: used,
          });
        }
        const next = this.#decide(call, error, used);
        if (next instanceof Error) {
          next.attempts = used;
          throw next;
        }
        wait = next;
      } finally {
        clearTimeout(deadlineTimer);
        if (!finished) {
          // The consumer stopped early (break/return): close the connection and the record.
          sent.body.destroy();
          sent.finish(null, bytes);
        }
      }
    }
  }

  /**
   * A `fetch` for other libraries (the MCP SDK transports take one) with this client's
   * timeouts, deadline, ledger and budget. Error statuses come back as responses, as fetch does;
   * retries happen only where they are safe (safe methods, or the caller's own Idempotency-Key
   * header). This client's key is sent only to its own origin.
   */
  readonly fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const request = input instanceof Request ? input : undefined;
    const url = new URL(request ? request.url : String(input));
    const headers = new Headers(request?.headers);
    new Headers(init.headers).forEach((value, name) => {
      headers.set(name, value);
    });
    const source = init.body ?? (request?.body ? await request.arrayBuffer() : undefined);
    let body: Uint8Array | undefined;
    if (source !== undefined && source !== null) {
      const encoded = new Response(source as ConstructorParameters<typeof Response>[0]);
      const type = encoded.headers.get('content-type');
      if (type && !headers.has('content-type')) headers.set('content-type', type);
      body = new Uint8Array(await encoded.arrayBuffer());
    }
    const plain: Record<string, string> = {};
    headers.forEach((value, name) => {
      plain[name] = value;
    });
    const signal = init.signal ?? request?.signal ?? undefined;
    const method = (init.method ?? request?.method ?? 'GET').toUpperCase();
    const call = this.#prepare(
      { method, path: url.pathname, headers: plain, ...(signal ? { signal } : {}) },
      url.href,
      body,
    );
    try {
      const { sent } = await this.#execute(call, 'stream', 1, NO_WAIT);
      if (sent.kind !== 'stream') throw new Error('unreachable: fetch returned a buffer');
      const isEventStream = (firstHeader(sent.headers, 'content-type') ?? '').includes('text/event-stream');
      // A body must be complete within the attempt's time; an event stream answering a request
      // must keep delivering events; a GET event stream (server notifications) may idle.
      const limits = {
        bodyTimeoutMs: isEventStream ? undefined : Math.max(0, sent.timeLeftMs),
        idleTimeoutMs: isEventStream && method !== 'GET' ? this.#idleTimeoutMs : undefined,
        deadlineMs: Number.isFinite(this.#remaining(call)) ? Math.max(0, this.#remaining(call)) : undefined,
      };
      return toWebResponse(sent.status, sent.headers, sent.body, sent.finish, limits, {
        method: call.method,
        path: call.path,
        signal: call.signal,
      });
    } catch (error) {
      const last = error instanceof APIError ? error : (error as { cause?: unknown }).cause;
      const response = last instanceof APIError ? this.#errorResponses.get(last) : undefined;
      if (response) {
        return new Response(response.buffer, { status: response.status, headers: flatHeaders(response.headers) });
      }
      throw error;
    }
  };

  /** Closes the connection pool (when the client created it). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher?.close();
  }

  [inspect.custom](): string {
    return `HttpClient { baseUrl: '${this.baseUrl}', auth: ${this.#authHeader ? `'${this.#authHeader[0]}: [redacted]'` : 'none'} }`;
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, auth: this.#authHeader ? `${this.#authHeader[0]}: [redacted]` : 'none' };
  }

  // Error responses kept for the fetch adapter, which must hand them back as responses.
  readonly #errorResponses = new WeakMap<APIError, { status: number; headers: IncomingHttpHeaders; buffer: Buffer }>();

  /**
   * @param absoluteUrl set by the fetch adapter: then no default Accept, no generated
   *   idempotency key, and this client's key and headers only for its own origin.
   */
  #prepare(options: CallOptions<TSchema | undefined>, absoluteUrl?: string, rawBody?: Uint8Array): Call {
    const method = (options.method ?? 'GET').toUpperCase();
    if (!absoluteUrl && !options.path.startsWith('/')) {
      throw new TypeError(`path must start with '/', got '${options.path}'`);
    }
    const url = new URL(absoluteUrl ?? `${this.baseUrl}${options.path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (Array.isArray(value)) for (const item of value) url.searchParams.append(name, String(item));
      else if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const ownOrigin = url.origin === this.#origin;
    const headers: Record<string, string> = absoluteUrl ? {} : { accept: 'application/json' };
    if (ownOrigin) Object.assign(headers, this.#headers);
    if (ownOrigin && this.#authHeader) headers[this.#authHeader[0]] = this.#authHeader[1];
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    let body = rawBody;
    if (options.json !== undefined) {
      body = Buffer.from(JSON.stringify(options.json));
      headers['content-type'] = 'application/json';
    }
    let idempotencyKey = headers['idempotency-key'];
    if (
      options.idempotencyKey !== undefined ||
      (!idempotencyKey && !absoluteUrl && this.#autoKeys && (method === 'POST' || method === 'PATCH'))
    ) {
      idempotencyKey = typeof options.idempotencyKey === 'string' ? options.idempotencyKey : randomUUID();
    }
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const now = this.#clock.now();
    const deadlines = [
      this.#deadline,
      options.deadline,
      options.deadlineMs === undefined ? undefined : now + options.deadlineMs,
    ].filter((d): d is number => d !== undefined);
    return {
      method,
      path: url.pathname,
      route: options.route ?? url.pathname,
      url: url.href,
      headers,
      body,
      idempotencyKey,
      replaySafe: isReplaySafe(method, idempotencyKey !== undefined, options.idempotent),
      deadline: deadlines.length > 0 ? Math.min(...deadlines) : undefined,
      signal: options.signal,
      timeoutMs: positiveInteger('timeoutMs', options.timeoutMs, this.#timeoutMs),
      maxRetries: positiveInteger('maxRetries', options.maxRetries, this.#maxRetries),
      cost: options.cost ?? this.#costOf?.({ method, path: url.pathname }) ?? 0,
      ledger: options.ledger,
    };
  }

  /** The retry loop: attempts until one succeeds or the policy gives up. */
  async #execute(
    call: Call,
    mode: 'buffered' | 'stream',
    firstAttempt: number,
    firstWait: Wait,
    resumedFrom?: string,
  ): Promise<Executed> {
    let wait = firstWait;
    for (let attempt = firstAttempt; ; attempt++) {
      if (wait.ms > 0) await this.#sleep(call, wait.ms, attempt - 1);
      const sent = await this.#attempt(call, attempt, wait, mode, resumedFrom);
      if (sent.kind !== 'error') {
        this.#retryBudget?.onSuccess();
        return { sent, attempt };
      }
      const { error } = sent;
      if (sent.sent && error.retryable) this.#retryBudget?.onFailure();
      if (sent.response && error instanceof APIError) this.#errorResponses.set(error, sent.response);
      const next = sent.sent ? this.#decide(call, error, attempt) : error;
      if (next instanceof Error) {
        next.attempts = sent.sent ? attempt : attempt - 1;
        throw next;
      }
      wait = next;
    }
  }

  /** Whether to try again, and after how long; or the error that ends the call. */
  #decide(call: Call, error: HttpClientError, attempt: number): Wait | HttpClientError {
    if (!error.retryable || attempt > call.maxRetries || !call.replaySafe) return error;
    if (this.#retryBudget) {
      const allowed = this.#retryBudget.allowsRetry();
      if (allowed !== !this.#throttled) {
        this.#throttled = !allowed;
        this.#event(call, allowed ? 'retry_budget_recovered' : 'retry_budget_engaged', this.#retryBudget.tokens);
      }
      if (!allowed) return error;
    }
    // The budget is checked before waiting, so a run out of budget does not sleep first.
    const overBudget = this.#budgetRefusal(call, error);
    if (overBudget) return overBudget;
    const serverWait = error instanceof APIError ? error.retryAfterMs : undefined;
    if (serverWait !== undefined && serverWait > 0) {
      const remaining = this.#remaining(call);
      if (serverWait >= remaining) {
        return new DeadlineExceededError(
          `the server asked to wait ${seconds(serverWait)} (Retry-After) but only ${seconds(Math.max(0, remaining))} ` +
            `remain before the deadline; not waiting. Last error: ${error.message}`,
          { method: call.method, path: call.path, status: error.status, requestId: error.requestId, cause: error },
        );
      }
      if (serverWait > this.#maxRetryAfterMs) {
        error.message += ` (not retried: the server asked to wait ${seconds(serverWait)}, more than maxRetryAfterMs ${seconds(this.#maxRetryAfterMs)})`;
        return error;
      }
      return { ms: serverWait, reason: 'retry_after' };
    }
    // No wait from the server, or "Retry-After: 0": the computed backoff, so a server that
    // always says 0 cannot pull the client into a tight loop.
    return this.#clampToDeadline(
      call,
      { ms: backoffDelay(attempt - 1, this.#backoff, this.#random), reason: 'backoff' },
      error,
    );
  }

  #budgetRefusal(call: Call, lastError: HttpClientError): HttpClientError | undefined {
    try {
      this.#budget?.check({ method: call.method, path: call.path, cost: call.cost, cause: lastError });
      return undefined;
    } catch (error) {
      return error as HttpClientError;
    }
  }

  /** A wait that would reach past the deadline is not started: the call fails now instead. */
  #clampToDeadline(call: Call, wait: Wait, error: HttpClientError): Wait | HttpClientError {
    const remaining = this.#remaining(call);
    if (wait.ms >= remaining) {
      return new DeadlineExceededError(
        `a retry after ${seconds(wait.ms)} (${wait.reason}) would start after the deadline ` +
          `(${seconds(Math.max(0, remaining))} left); not waiting. Last error: ${error.message}`,
        { method: call.method, path: call.path, cause: error },
      );
    }
    return wait;
  }

  #remaining(call: Call): number {
    return call.deadline === undefined ? Number.POSITIVE_INFINITY : call.deadline - this.#clock.now();
  }

  async #sleep(call: Call, ms: number, attemptsSoFar: number): Promise<void> {
    try {
      await this.#clock.sleep(ms, call.signal);
    } catch (cause) {
      const error = classifyFailure(cause, {
        ...call,
        callerSignal: call.signal,
        timer: undefined,
        timeoutMs: call.timeoutMs,
      });
      error.attempts = attemptsSoFar;
      throw error;
    }
  }

  /** Follows the caller's signal without AbortSignal.any, whose links pile up on a long-lived signal. */
  #linkSignal(call: Call, controller: AttemptAbort): () => void {
    const signal = call.signal;
    if (!signal) return () => undefined;
    const onAbort = () => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  }

  /** One attempt: budget check, send, read (unless streaming), record. */
  async #attempt(
    call: Call,
    attempt: number,
    wait: Wait,
    mode: 'buffered' | 'stream',
    resumedFrom: string | undefined,
  ): Promise<Sent> {
    const startedAt = this.#clock.now();
    const started = performance.now();
    const bytesSent = call.body?.length ?? 0;
    const record = (status: number | null, errorType: string | null, bytesReceived: number, requestId?: string) => {
      this.#budget?.chargeBytes(bytesSent + bytesReceived);
      const entry: AttemptRecord = {
        kind: 'attempt',
        time: new Date(startedAt).toISOString(),
        layer: this.#layer,
        method: call.method,
        path: call.path,
        route: call.route,
        attempt,
        waitMs: wait.ms,
        waitReason: wait.reason,
        status,
        errorType,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        bytesSent,
        bytesReceived,
        idempotencyKey: call.idempotencyKey ?? null,
        requestId: requestId ?? null,
        ...(resumedFrom === undefined ? {} : { resumedFrom }),
      };
      this.#ledger?.add(entry);
      call.ledger?.add(entry);
    };
    const notSent = (error: HttpClientError): Sent => ({ kind: 'error', error, sent: false });

    if (call.signal?.aborted) {
      return notSent(
        classifyFailure(undefined, { ...call, callerSignal: call.signal, timer: undefined, timeoutMs: call.timeoutMs }),
      );
    }
    const remaining = this.#remaining(call);
    if (remaining <= 0) {
      return notSent(
        new DeadlineExceededError('the deadline passed before the next attempt', {
          method: call.method,
          path: call.path,
        }),
      );
    }
    try {
      this.#budget?.check({ method: call.method, path: call.path, cost: call.cost });
    } catch (error) {
      return notSent(error as HttpClientError);
    }
    this.#budget?.chargeAttempt(call.cost);

    const limit = Math.min(call.timeoutMs, remaining);
    const timerReason: TimerReason = limit < call.timeoutMs ? 'deadline' : 'timeout';
    const controller = new AttemptAbort();
    let fired: TimerReason | undefined;
    const timer = setTimeout(() => {
      fired = timerReason;
      controller.abort();
    }, limit);
    const unlink = this.#linkSignal(call, controller);
    let bytesReceived = 0;
    let status: number | null = null;
    let requestId: string | undefined;
    let handedOver = false;
    try {
      const undici = loadUndici();
      this.#dispatcher ??= new undici.Agent({ keepAliveTimeout: 10_000, connections: 128 });
      const response = await undici.request(call.url, {
        method: call.method as Dispatcher.HttpMethod,
        headers: call.headers,
        body: call.body ?? null,
        signal: controller,
        dispatcher: this.#dispatcher,
      });
      status = response.statusCode;
      requestId = firstHeader(response.headers, 'request-id');
      if (mode === 'stream' && status < 400) {
        clearTimeout(timer);
        handedOver = true;
        const finish: Finish = (errorType, bytes) => {
          unlink();
          record(status, errorType, bytes, requestId);
        };
        return {
          kind: 'stream',
          status,
          headers: response.headers,
          body: response.body,
          finish,
          timeLeftMs: limit - (performance.now() - started),
        };
      }
      const chunks: Buffer[] = [];
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        bytesReceived += chunk.length;
        chunks.push(chunk);
      }
      clearTimeout(timer);
      const buffer = Buffer.concat(chunks);
      if (status >= 400) {
        const error = errorFromResponse(status, response.headers, buffer.toString('utf8'), {
          method: call.method,
          path: call.path,
          now: this.#clock.now(),
          secrets: this.#secrets,
        });
        record(status, error.type, bytesReceived, requestId);
        return { kind: 'error', error, sent: true, response: { status, headers: response.headers, buffer } };
      }
      record(status, null, bytesReceived, requestId);
      return { kind: 'ok', status, headers: response.headers, buffer };
    } catch (cause) {
      clearTimeout(timer);
      const error = classifyFailure(cause, { ...call, callerSignal: call.signal, timer: fired, timeoutMs: limit });
      record(status, error.type, bytesReceived, requestId);
      return { kind: 'error', error, sent: true };
    } finally {
      if (!handedOver) unlink();
    }
  }

  #parseBody(
    call: Call,
    sent: { status: number; headers: IncomingHttpHeaders; buffer: Buffer },
    schema: TSchema | undefined,
  ): unknown {
    if (sent.buffer.length === 0) return undefined;
    const type = firstHeader(sent.headers, 'content-type') ?? '';
    // Binary bodies (images, archives, ...) come back as bytes; text as a string; JSON parsed.
    if (/^(image|audio|video)\/|octet-stream|application\/(pdf|zip)/i.test(type)) return sent.buffer;
    const text = sent.buffer.toString('utf8');
    if (!type.includes('json')) return text;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (cause) {
      throw new InvalidResponseError(`the ${sent.status} response is not valid JSON`, {
        method: call.method,
        path: call.path,
        status: sent.status,
        requestId: firstHeader(sent.headers, 'request-id'),
        cause,
      });
    }
    if (!schema) return data;
    let validate = this.#validators.get(schema);
    if (!validate) {
      validate = compileValidator(schema);
      this.#validators.set(schema, validate);
    }
    const result = validate(data);
    if (!result.ok) {
      throw new InvalidResponseError(`the response does not match its schema:\n${result.errors.join('\n')}`, {
        method: call.method,
        path: call.path,
        status: sent.status,
        requestId: firstHeader(sent.headers, 'request-id'),
      });
    }
    return result.value;
  }

  #event(call: Call, event: 'retry_budget_engaged' | 'retry_budget_recovered', tokens: number): void {
    this.#ledger?.add({
      kind: 'event',
      time: new Date(this.#clock.now()).toISOString(),
      layer: this.#layer,
      event,
      method: call.method,
      path: call.path,
      detail:
        event === 'retry_budget_engaged'
          ? `retry budget at ${tokens.toFixed(1)} tokens: retries paused until successes refill it`
          : `retry budget refilled to ${tokens.toFixed(1)} tokens: retries resume`,
    });
  }
}
