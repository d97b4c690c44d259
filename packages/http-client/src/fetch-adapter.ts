// A `fetch` for other libraries (the MCP SDK transports take one) with a client's timeouts,
// deadline, ledger and budget. Error statuses come back as responses, as fetch does; retries
// happen only where they are safe (safe methods, or the caller's own Idempotency-Key header).
// The client's key is sent only to its own origin (prepareCall sees to that).
import type { TSchema } from 'typebox';
import { type Call, NO_WAIT } from './call.js';
import type { CallOptions } from './client-options.js';
import { APIError } from './errors/api-errors.js';
import { flatHeaders, toWebResponse } from './fetch-response.js';
import { firstHeader } from './headers.js';
import type { RetryLoop } from './retry-loop.js';

export interface FetchContext {
  loop: RetryLoop;
  prepare(options: CallOptions<TSchema | undefined>, absoluteUrl: string, rawBody: Uint8Array | undefined): Call;
  /** How long an event stream answering a request may go without an event. */
  idleTimeoutMs: number;
  /** The most bytes a body takes (a GET event stream: each event). */
  maxResponseBytes: number;
}

export function createFetch(
  ctx: FetchContext,
): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init = {}) => {
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
    const call = ctx.prepare(
      { method, path: url.pathname, headers: plain, ...(signal ? { signal } : {}) },
      url.href,
      body,
    );
    try {
      const { sent } = await ctx.loop.execute(call, 'stream', 1, NO_WAIT);
      const isEventStream = (firstHeader(sent.headers, 'content-type') ?? '').includes('text/event-stream');
      const remaining = ctx.loop.remaining(call);
      // A body must be complete within the attempt's time and size; an event stream answering a
      // request must keep delivering events; a GET event stream (server notifications) may idle,
      // and run on for as long as no one event passes the size.
      const notifications = isEventStream && method === 'GET';
      const limits = {
        bodyTimeoutMs: isEventStream ? undefined : Math.max(0, sent.timeLeftMs),
        idleTimeoutMs: isEventStream && !notifications ? ctx.idleTimeoutMs : undefined,
        deadlineMs: Number.isFinite(remaining) ? Math.max(0, remaining) : undefined,
        maxBytes: ctx.maxResponseBytes,
        perEvent: notifications,
      };
      return toWebResponse(sent.status, sent.headers, sent.body, sent.finish, limits, {
        method: call.method,
        path: call.path,
        signal: call.signal,
      });
    } catch (error) {
      const last = error instanceof APIError ? error : (error as { cause?: unknown }).cause;
      const response = last instanceof APIError ? ctx.loop.errorResponse(last) : undefined;
      if (response) {
        return new Response(response.buffer, { status: response.status, headers: flatHeaders(response.headers) });
      }
      throw error;
    }
  };
}
