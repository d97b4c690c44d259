// Loads the OpenAPI document from a URL or a file, as JSON or YAML.
import { readFile, stat } from 'node:fs/promises';

export class SpecLoadError extends Error {
  override readonly name = 'SpecLoadError';
}

async function parseDocument(text: string, where: string): Promise<unknown> {
  try {
    // Less a byte order mark (a file saved by some Windows editors): else a JSON document would
    // fail as JSON and be read by the YAML parser, many times slower.
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    try {
      // Loaded only for YAML documents, to keep start-up fast for JSON ones.
      const { parse: parseYaml } = await import('yaml');
      return parseYaml(text);
    } catch (error) {
      // The parser's first line only ("... at line 3, column 1"): the lines after it quote the
      // file, and a path named by mistake (or on purpose) may be any readable file.
      const reason = (error as Error).message.split('\n')[0]?.replace(/:$/, '');
      throw new SpecLoadError(`${where} is neither JSON nor YAML: ${reason}`);
    }
  }
}

/**
 * The largest document read, from a URL or a file (MAX_SPEC_BYTES): GitHub's is 13 MB and
 * Microsoft Graph's beta 45 MB, both read and converted within a few seconds.
 */
export const DEFAULT_MAX_SPEC_BYTES = 64 * 1024 * 1024;
const ATTEMPTS = 3;
/** The whole fetch of a document, every attempt and its wait included (a byte now and then never extends it). */
export const SPEC_FETCH_DEADLINE_MS = 30_000;

class DeadlineError extends Error {}

class SpecHttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

/**
 * One GET with node:http(s), not the resilient client: it answers before the client's undici
 * has loaded (about 120 ms), which is most of the gateway's start-up. Bounded in time and size.
 */
async function getText(url: URL, headers: Record<string, string>, msLeft: number, maxBytes: number): Promise<string> {
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    // A total deadline, not only an idle one: an idle timeout starts again with every byte, and a
    // server sending one byte every few seconds held the start (and every later reload) for good.
    const total = setTimeout(() => req.destroy(new DeadlineError()), msLeft);
    // Settled once: a body cut at the limit can still end as if whole, and must not be read.
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      reject(error);
    };
    const req = request(url, { headers, timeout: Math.min(msLeft, 30_000) }, (res) => {
      if ((res.statusCode ?? 0) >= 300) {
        res.resume();
        fail(new SpecHttpError(res.statusCode ?? 0));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size <= maxBytes) {
          chunks.push(chunk);
          return;
        }
        // Not worth a second try: the same document is as large again.
        fail(new SpecLoadError(`the OpenAPI document from ${url.href} ${tooLarge(maxBytes)}`));
        req.destroy();
      });
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
      res.on('error', fail);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', fail);
    req.end();
  });
}

const tooLarge = (maxBytes: number) => `is larger than ${maxBytes} bytes, the most the gateway reads (MAX_SPEC_BYTES)`;

/**
 * @param source an http(s) URL or a file path
 * @param headers sent with a URL fetch (the upstream key, when the document lives upstream)
 */
export async function loadSpec(
  source: string,
  headers: Record<string, string> = {},
  deadlineMs = SPEC_FETCH_DEADLINE_MS,
  maxBytes = DEFAULT_MAX_SPEC_BYTES,
): Promise<unknown> {
  if (/^https?:\/\//i.test(source)) {
    const url = new URL(source);
    const sent = { accept: 'application/json, application/yaml;q=0.9, */*;q=0.1', ...headers };
    const deadline = Date.now() + deadlineMs;
    // A few tries with a short pause: the API may still be starting (connection refused, 5xx).
    for (let attempt = 1; ; attempt++) {
      try {
        return await parseDocument(await getText(url, sent, Math.max(1, deadline - Date.now()), maxBytes), source);
      } catch (error) {
        if (error instanceof SpecLoadError) throw error;
        if (error instanceof DeadlineError) {
          throw new SpecLoadError(
            `the OpenAPI document from ${source} did not arrive in full within ${deadlineMs / 1000} s (the spec fetch's deadline)`,
          );
        }
        const status = error instanceof SpecHttpError ? error.status : undefined;
        const retryable = status === undefined || status >= 500 || status === 429;
        if (!retryable || attempt >= ATTEMPTS) {
          throw new SpecLoadError(
            status !== undefined
              ? `fetching the OpenAPI document from ${source} answered HTTP ${status}`
              : `cannot fetch the OpenAPI document from ${source}: ${(error as Error).message}`,
          );
        }
        const pause = 250 * 2 ** (attempt - 1);
        if (Date.now() + pause >= deadline) {
          throw new SpecLoadError(
            `cannot fetch the OpenAPI document from ${source} within ${deadlineMs / 1000} s: ${(error as Error).message}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
  let text: string;
  try {
    // Its size first: a path named by mistake may be a disk image.
    if ((await stat(source)).size > maxBytes)
      throw new SpecLoadError(`the OpenAPI document ${source} ${tooLarge(maxBytes)}`);
    text = await readFile(source, 'utf8');
  } catch (error) {
    if (error instanceof SpecLoadError) throw error;
    throw new SpecLoadError(`cannot read the OpenAPI document ${source}: ${(error as Error).message}`);
  }
  return parseDocument(text, source);
}
