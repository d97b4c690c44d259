// Writes a server-sent event stream by hand, because the faults it must produce on purpose
// (drop the connection after k events, resume from Last-Event-ID) are the point of it.
// Every event has an id; the stream opens with a retry field and sends `: ping` heartbeats.
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface SseEvent {
  id: string;
  event: string;
  data: unknown;
}

export interface SseOptions {
  /** Pause before each event. */
  intervalMs: number;
  heartbeatMs: number;
  /** Reconnection delay advertised to clients. */
  retryMs: number;
  /** Drop the connection (without a clean end) after this many events. */
  cutAfter?: number | undefined;
}

export function encodeEvent(event: SseEvent): string {
  const data = JSON.stringify(event.data);
  return `id: ${event.id}\nevent: ${event.event}\ndata: ${data}\n\n`;
}

/** Streams events until done, the client leaves, or the planned cut. Resolves when it stops. */
export function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  events: readonly SseEvent[],
  options: SseOptions,
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'request-id': String(request.id),
  });
  res.write(`retry: ${options.retryMs}\n\n`);

  return new Promise((resolve) => {
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const heartbeat = setInterval(() => res.write(': ping\n\n'), options.heartbeatMs);
    const stop = () => {
      clearInterval(heartbeat);
      if (timer) clearTimeout(timer);
      resolve();
    };
    res.once('close', stop);

    const next = () => {
      if (options.cutAfter !== undefined && sent >= options.cutAfter) {
        request.log.info({ sent }, 'cutting the event stream on purpose');
        clearInterval(heartbeat);
        res.destroy();
        return;
      }
      const event = events[sent];
      if (!event) {
        clearInterval(heartbeat);
        res.end();
        return;
      }
      res.write(encodeEvent(event));
      sent++;
      timer = setTimeout(next, options.intervalMs);
    };
    timer = setTimeout(next, options.intervalMs);
  });
}
