// A tool call whose answer comes as an SSE stream (the gateway streams progress first) can lose
// that stream mid-way: the replica behind the balancer dies, the connection is cut. The stream
// has no event ids, so there is nothing to resume from, and the official client neither resumes
// nor fails the call: it waits for an answer that will never come, until its timeout or our
// deadline. This watch tells the call instead, so that it fails at once as lost in transit and
// a call that is safe to repeat is sent again.
//
// How: the transport's fetch is wrapped. Each call runs in an AsyncLocalStorage context holding
// its watch; a POST answered with an event stream inside that context gets its body read
// through a guard that notes an `id:` field (then the client can resume by itself, and is left
// to it, unless the server refuses the resume) and the end of the body. When the body breaks, or ends, while the call is still
// waiting, the call is aborted. A short grace first lets an answer that was already in the
// stream reach the call: the client parses the body a few steps behind the guard.
import { AsyncLocalStorage } from 'node:async_hooks';

/** How long a call may still settle after its stream broke or ended, before it counts as lost. */
const GRACE_MS = 250;

export class AnswerStreamCut extends Error {
  override readonly name = 'AnswerStreamCut';
}

/** One tool call's watch. */
class AnswerWatch {
  readonly #controller = new AbortController();
  #settled = false;
  /** Why the answer is lost, once it is. */
  lost: AnswerStreamCut | undefined;

  /** Aborted when the call's answer is lost: pass it (with any other signal) to the call. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The call has its answer, or failed for a reason of its own: nothing more to watch. */
  settle(): void {
    this.#settled = true;
  }

  /** The stream carrying the answer broke or ended: unless the call settles meanwhile, it is lost. */
  streamStopped(how: string): void {
    if (this.#settled) return;
    setTimeout(() => {
      if (this.#settled || this.lost) return;
      this.lost = new AnswerStreamCut(`the stream carrying the answer ${how} before the answer arrived`);
      this.#controller.abort(this.lost);
    }, GRACE_MS).unref();
  }
}

const current = new AsyncLocalStorage<AnswerWatch>();

/** One request with its answer watched: when its streamed answer is cut, it fails with AnswerStreamCut. */
export async function watched<T>(what: string, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const watch = new AnswerWatch();
  try {
    // Every POST the request makes runs in this context, so the fetch below finds the watch.
    return await current.run(watch, () => request(watch.signal));
  } catch (error) {
    if (watch.lost) throw new AnswerStreamCut(`${what}: ${watch.lost.message}`, { cause: error });
    throw error;
  } finally {
    watch.settle();
  }
}

/**
 * Wraps the transport's fetch: event-stream answers to POSTs made inside a watched call are
 * guarded; and when the client resumes a stream (a GET with Last-Event-ID, inside the call) and
 * the server will not resume it (404, 405: a balancer that passes no GET, a replica that never
 * had it), the answer is lost: the call fails at once instead of waiting for its deadline.
 */
export function watchingAnswers(fetchFn: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchFn(input, init);
    const watch = current.getStore();
    // Only a refusal that will not pass: a 503 (a replica shutting down) or a 502 may, and the SDK tries again.
    const refused = response.status === 404 || response.status === 405;
    if (watch && (init?.method ?? 'GET') === 'GET' && refused && new Headers(init?.headers).has('last-event-id')) {
      watch.streamStopped(`could not be resumed (HTTP ${response.status})`);
      return response;
    }
    const isStream = response.headers.get('content-type')?.includes('text/event-stream') === true;
    if (!watch || init?.method !== 'POST' || !isStream || !response.body) return response;
    return new Response(guard(response.body, watch), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The body as it came, telling the watch when it breaks or ends (unless it carried an event id). */
function guard(body: ReadableStream<Uint8Array>, watch: AnswerWatch): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let partial = '';
  let resumable = false;
  // A stream that carried its request's answer and then ended is done, not cut: a multi
  // round-trip answer (input_required, 2026-07-28) ends its stream and the client asks again,
  // on a POST of its own that is watched in turn.
  let answered = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (!resumable) watch.streamStopped(`was cut (${(error as Error).message})`);
        controller.error(error);
        return;
      }
      if (chunk.done) {
        if (!resumable && !answered) watch.streamStopped('ended');
        controller.close();
        return;
      }
      if (!resumable) {
        const lines = (partial + decoder.decode(chunk.value, { stream: true })).split('\n');
        partial = lines.pop() ?? '';
        resumable = lines.some((line) => /^id:\s*\S/.test(line));
        answered ||= lines.some(isResponseLine);
      }
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** An event's data line that holds a JSON-RPC response (an id, and a result or an error). */
function isResponseLine(line: string): boolean {
  if (!line.startsWith('data:') || !line.includes('"id"')) return false;
  try {
    const message = JSON.parse(line.slice(5)) as Record<string, unknown>;
    return message.id !== undefined && ('result' in message || 'error' in message);
  } catch {
    return false;
  }
}
