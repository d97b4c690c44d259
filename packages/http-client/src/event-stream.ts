// Reads server-sent events from a response body with eventsource-parser (CR, LF and CRLF,
// split anywhere across chunks; multi-line data; comments; the retry field). An idle timer
// counts events, not bytes: heartbeat comments do not keep a dead stream alive.
import type { Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';

export interface SseEvent {
  /** The event type; 'message' when the server named none. */
  event: string;
  data: string;
  /** The event's id, when it had one. */
  id: string | undefined;
}

export class StreamIdleError extends Error {
  override readonly name = 'StreamIdleError';
}

export interface ReadEventsOptions {
  idleTimeoutMs: number;
  onRetry: (ms: number) => void;
  onBytes: (n: number) => void;
}

export async function* readEvents(body: Readable, options: ReadEventsOptions): AsyncGenerator<SseEvent> {
  const queue: SseEvent[] = [];
  const parser = createParser({
    onEvent: (e) => queue.push({ event: e.event ?? 'message', data: e.data, id: e.id }),
    onRetry: options.onRetry,
  });
  const decoder = new TextDecoder();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () => body.destroy(new StreamIdleError(`no event within ${options.idleTimeoutMs} ms`)),
      options.idleTimeoutMs,
    );
  };
  arm();
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      options.onBytes(chunk.length);
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (queue.length === 0) continue;
      clearTimeout(timer);
      while (queue.length > 0) yield queue.shift() as SseEvent;
      arm();
    }
    parser.feed(decoder.decode());
    while (queue.length > 0) yield queue.shift() as SseEvent;
  } finally {
    clearTimeout(timer);
  }
}
