// Writes Server-Sent Events to a raw response: JSON-RPC messages as `message` events (with an
// id when the stream can be resumed), and comments for heartbeats.
import type { ServerResponse } from 'node:http';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

export class SseWriter {
  readonly #res: ServerResponse;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  get open(): boolean {
    return !this.#res.writableEnded && !this.#res.destroyed;
  }

  start(): void {
    this.#res.writeHead(200, SSE_HEADERS);
  }

  send(message: unknown, id?: string): void {
    if (!this.open) return;
    this.#res.write(`${id === undefined ? '' : `id: ${id}\n`}event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** A raw field line, such as `retry: 1000` (the priming event of 2025-11-25). */
  field(line: string): void {
    if (this.open) this.#res.write(`${line}\n\n`);
  }

  comment(text: string): void {
    if (this.open) this.#res.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.open) this.#res.end();
  }
}
