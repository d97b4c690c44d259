// The client: what a caller holds. It checks its options once (client-options.ts), prepares
// each call (call.ts) and hands it to the retry loop (retry-loop.ts), which makes the attempts
// over undici (attempt.ts). Whole responses are parsed here (response-body.ts); event streams
// (event-stream-call.ts) and the fetch adapter (fetch-adapter.ts) run on the same loop.
import { inspect } from 'node:util';
import type { TSchema } from 'typebox';
import type { Dispatcher } from 'undici';
import { defaultDispatcher } from './attempt.js';
import { NO_WAIT, prepareCall } from './call.js';
import {
  type CallOptions,
  type ClientOptions,
  type ClientSettings,
  type Data,
  type HttpResponse,
  resolveSettings,
  type StreamOptions,
} from './client-options.js';
import { ConcurrencyLimiter } from './concurrency-limit.js';
import type { SseEvent } from './event-stream.js';
import { streamEvents } from './event-stream-call.js';
import { createFetch } from './fetch-adapter.js';
import { firstHeader } from './headers.js';
import { LatencyWindow } from './hedging.js';
import { ResponseBodies } from './response-body.js';
import { type ResilienceCounts, RetryLoop } from './retry-loop.js';

export type {
  AuthOptions,
  BreakerClientOptions,
  CallOptions,
  ClientOptions,
  HttpResponse,
  Query,
  StreamOptions,
} from './client-options.js';
export type { ResilienceCounts } from './retry-loop.js';

/**
 * A resilient HTTP client for agents: timeouts, deadlines, retries with backoff and
 * Retry-After, idempotency keys, a retry budget, a ledger and a budget.
 * @example
 *   const client = new HttpClient({ baseUrl: 'http://127.0.0.1:8080', auth: { env: 'TOY_API_KEY' } });
 *   const page = await client.get('/emails', { query: { urgent: true }, schema: EmailPage });
 */
export class HttpClient {
  readonly baseUrl: string;
  readonly #settings: ClientSettings;
  readonly #loop: RetryLoop;
  readonly #bodies = new ResponseBodies();
  /** Made on the first request (undici loads then), unless the caller gave one. */
  #dispatcher: Dispatcher | undefined;
  readonly #ownsDispatcher: boolean;
  readonly #limiters: Map<string, ConcurrencyLimiter>;

  constructor(options: ClientOptions) {
    this.#settings = resolveSettings(options);
    this.baseUrl = this.#settings.baseUrl;
    this.#dispatcher = this.#settings.dispatcher;
    this.#ownsDispatcher = this.#dispatcher === undefined;
    const { concurrency, hedge } = this.#settings;
    const limiters = new Map<string, ConcurrencyLimiter>();
    this.#limiters = limiters;
    this.#loop = new RetryLoop({
      settings: this.#settings,
      dispatcher: () => {
        this.#dispatcher ??= defaultDispatcher();
        return this.#dispatcher;
      },
      limiter: concurrency
        ? (origin) => {
            let limiter = limiters.get(origin);
            if (!limiter) {
              limiter = new ConcurrencyLimiter(concurrency);
              limiters.set(origin, limiter);
            }
            return limiter;
          }
        : undefined,
      latencies: hedge && hedge.delayMs === undefined ? new LatencyWindow() : undefined,
    });
    this.fetch = createFetch({
      loop: this.#loop,
      prepare: (callOptions, absoluteUrl, rawBody) => prepareCall(this.#settings, callOptions, absoluteUrl, rawBody),
      idleTimeoutMs: this.#settings.idleTimeoutMs,
      maxResponseBytes: this.#settings.maxResponseBytes,
    });
  }

  /**
   * Sends a request and reads the whole response: JSON bodies are parsed (and validated with
   * `schema`), text types (text/*, XML, JavaScript, forms, YAML) as a string, and every other
   * type (images, archives, PDF, spreadsheets, ...) as a Buffer.
   */
  async request<S extends TSchema | undefined = undefined>(options: CallOptions<S>): Promise<HttpResponse<Data<S>>> {
    const call = prepareCall(this.#settings, options);
    const { sent, attempt } = await this.#loop.execute(call, 'buffered', 1, NO_WAIT);
    const { data, text, bytes } = this.#bodies.parse(call, sent, options.schema, this.#settings.scrubber);
    return {
      status: sent.status,
      headers: sent.headers,
      data: data as Data<S>,
      text,
      bytes,
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
    const call = prepareCall(this.#settings, {
      ...options,
      headers: { accept: 'text/event-stream', ...options.headers },
    });
    yield* streamEvents(this.#loop, call, {
      idleTimeoutMs: options.idleTimeoutMs ?? this.#settings.idleTimeoutMs,
      maxResumes: options.maxResumes ?? this.#settings.maxResumes,
      maxRetryAfterMs: this.#settings.maxRetryAfterMs,
      maxResponseBytes: this.#settings.maxResponseBytes,
      scrubber: this.#settings.scrubber,
      onFailure: () => this.#settings.retryBudget?.onFailure(),
    });
  }

  /**
   * A `fetch` for other libraries (the MCP SDK transports take one) with this client's
   * timeouts, deadline, ledger and budget. Error statuses come back as responses, as fetch does;
   * retries happen only where they are safe (safe methods, or the caller's own Idempotency-Key
   * header). This client's key is sent only to its own origin.
   */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

  /**
   * What the client's resilience options are doing now, for metrics: hedges sent and won so far,
   * calls an open breaker refused, and per origin the attempts in flight and waiting for a slot.
   */
  resilience(): ResilienceCounts & { concurrency: Record<string, { inFlight: number; queued: number }> } {
    const concurrency: Record<string, { inFlight: number; queued: number }> = {};
    for (const [origin, limiter] of this.#limiters)
      concurrency[origin] = { inFlight: limiter.inFlight, queued: limiter.queued };
    return { ...this.#loop.counts, concurrency };
  }

  /** Closes the connection pool (when the client created it). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher?.close();
  }

  [inspect.custom](): string {
    const auth = this.#settings.authHeader;
    return `HttpClient { baseUrl: '${this.baseUrl}', auth: ${auth ? `'${auth[0]}: [redacted]'` : 'none'} }`;
  }

  toJSON(): Record<string, unknown> {
    const auth = this.#settings.authHeader;
    return { baseUrl: this.baseUrl, auth: auth ? `${auth[0]}: [redacted]` : 'none' };
  }
}
