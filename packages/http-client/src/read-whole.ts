// A response body read whole, stopping as soon as it passes a limit. With events, not
// `for await`: without the async iterator (a generator, an end-of-stream watcher, a promise a
// chunk) the gateway went from 386 to 381 k instructions a call (bench/instructions.mjs --before).
import type { Readable } from 'node:stream';

/** What has been read so far; kept by the caller, so that a failure mid-body still counts its bytes. */
export interface Read {
  chunks: Buffer[];
  bytes: number;
}

/**
 * Resolves true when the body went past `maxBytes` (it is destroyed then, and nothing past the
 * limit is kept), false at its end. Rejects with the stream's error, or, when it closes with
 * neither an end nor an error, with what `for await` would throw (ERR_STREAM_PREMATURE_CLOSE):
 * never left waiting.
 */
export function readWhole(body: Readable, maxBytes: number, read: Read): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    let settled = false;
    const onData = (chunk: Buffer) => {
      read.bytes += chunk.length;
      if (read.bytes <= maxBytes) read.chunks.push(chunk);
      else {
        // Not another chunk counted: a stream may emit what it already holds after destroy().
        body.off('data', onData);
        settled = true;
        resolve(true);
        body.destroy();
      }
    };
    body.on('data', onData);
    body.on('end', () => {
      settled = true;
      resolve(false);
    });
    body.on('error', (error) => {
      settled = true;
      reject(error);
    });
    body.on('close', () => {
      // The error made only when it is thrown: an Error's stack trace costs more than the read.
      if (!settled) reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}
