// Turns an undici response into a web `Response` for the fetch adapter, counting the body's
// bytes for the ledger and closing the attempt's record when the body ends, fails or is dropped.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export function flatHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  return out;
}

/**
 * @param bodyTimeoutMs when set, the body must be complete within it (a timeout error
 *   otherwise); left unset for event streams, which may legitimately stay open.
 */
export function toWebResponse(
  status: number,
  headers: IncomingHttpHeaders,
  body: Readable,
  finish: (errorType: string | null, bytes: number) => void,
  bodyTimeoutMs: number | undefined,
): Response {
  let bytes = 0;
  let done = false;
  const end = (errorType: string | null) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    finish(errorType, bytes);
  };
  const timer =
    bodyTimeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          body.destroy(new Error(`response body not complete within ${bodyTimeoutMs} ms`));
        }, bodyTimeoutMs);

  if (NULL_BODY_STATUS.has(status)) {
    body.resume();
    end(null);
    return new Response(null, { status, headers: flatHeaders(headers) });
  }
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      body.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 1) <= 0) body.pause();
      });
      body.once('end', () => {
        end(null);
        controller.close();
      });
      body.once('error', (error) => {
        end(bytes > 0 ? 'connection_error' : 'timeout_error');
        controller.error(error);
      });
    },
    pull() {
      body.resume();
    },
    cancel() {
      end(null);
      body.destroy();
    },
  });
  return new Response(stream, { status, headers: flatHeaders(headers) });
}
