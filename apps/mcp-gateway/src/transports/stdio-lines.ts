// The lines of stdin, each at most a message's size. readline keeps a line of any length in
// memory until its newline comes, so a client (or a model's arguments passed through one) that
// writes one without end would fill the gateway; over HTTP the same message is refused at 1 MiB.
// A line ends at `\n` (a `\r` before it is dropped), as MCP's stdio transport delimits messages.
import type { Readable } from 'node:stream';

export interface LineHandlers {
  line(text: string): void;
  /** A line passed `maxBytes`: it is dropped whole, up to its newline, and this is called once for it. */
  tooLong(): void;
  close(): void;
}

export function readLines(input: Readable, maxBytes: number, handlers: LineHandlers): void {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let dropping = false;
  const emit = () => {
    const text = Buffer.concat(held, heldBytes).toString('utf8');
    handlers.line(text.endsWith('\r') ? text.slice(0, -1) : text);
  };
  input.on('data', (data: Buffer | string) => {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      if (!dropping && heldBytes + piece.length > maxBytes) {
        dropping = true;
        held = [];
        heldBytes = 0;
        handlers.tooLong();
      } else if (!dropping && piece.length > 0) {
        held.push(piece);
        heldBytes += piece.length;
      }
      if (newline === -1) return;
      if (!dropping) emit();
      held = [];
      heldBytes = 0;
      dropping = false;
      start = newline + 1;
    }
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    handlers.close();
  };
  input.once('end', () => {
    // The last line may come without a newline.
    if (!dropping && heldBytes > 0) emit();
    close();
  });
  input.once('close', close);
}
