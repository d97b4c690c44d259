// The digest's event stream, written through @fastify/sse: a `retry:` field first, then each
// event (every one with an id) after a pause, the plugin's heartbeat comments in between, and
// on purpose a cut (the connection dropped without a clean end) after k events. The pause ends
// early when the client leaves, and the stream stops there.
//
// One hook the plugin (0.6.0) lacks, added here: its heartbeat interval is fixed when the
// plugin is registered, and the digest takes one per request (`heartbeat_ms`). The plugin
// starts the heartbeat when it writes the head, at the interval its reply context holds;
// `setHeartbeat` sets that interval before the first write. The timer and the comment are the
// plugin's.
import type { SSEMessage, SSEReplyInterface } from '@fastify/sse';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface StreamOptions {
  /** Pause before each event. */
  intervalMs: number;
  heartbeatMs: number;
  /** Reconnection delay advertised to clients. */
  retryMs: number;
  /** Drop the connection (without a clean end) after this many events. */
  cutAfter?: number | undefined;
}

/** The plugin's reply context, as far as the heartbeat hook needs it. */
interface HeartbeatField {
  heartbeatInterval: number;
}

/** Sets one reply's heartbeat interval; it takes effect when the head is written. */
export function setHeartbeat(sse: SSEReplyInterface, ms: number): void {
  const context = sse as unknown as Partial<HeartbeatField>;
  if (typeof context.heartbeatInterval !== 'number') {
    throw new Error('@fastify/sse no longer keeps heartbeatInterval on its reply context; see the toy API README');
  }
  context.heartbeatInterval = ms;
}

export interface StreamOutcome {
  ended: 'completed' | 'client-left' | 'cut';
  /** Events written (the bare `retry:` field not counted). */
  sent: number;
}

/** Streams the events until done, the client leaves, or the planned cut; says which when it stops. */
export async function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  events: readonly SSEMessage[],
  options: StreamOptions,
): Promise<StreamOutcome> {
  const sse = reply.sse;
  // The pause between events ends early when the client leaves. (One timer per pause: an
  // AbortSignal per pause cost more than the rest of the stream put together.)
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });
  sse.onClose(() => {
    clearTimeout(timer);
    wake?.();
  });
  setHeartbeat(sse, options.heartbeatMs);
  // A message without data is a bare `retry:` field: no event reaches the client's handler.
  await sse.send({ data: undefined, retry: options.retryMs });
  for (const [sent, event] of events.entries()) {
    await pause(options.intervalMs);
    if (!sse.isConnected) return { ended: 'client-left', sent };
    if (options.cutAfter !== undefined && sent >= options.cutAfter) {
      request.log.info({ sent }, 'cutting the event stream on purpose');
      reply.raw.destroy();
      return { ended: 'cut', sent };
    }
    await sse.send(event);
  }
  return { ended: 'completed', sent: events.length };
}
