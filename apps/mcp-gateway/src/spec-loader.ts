// Loads the OpenAPI document from a URL or a file, as JSON or YAML.
import { readFile } from 'node:fs/promises';

export class SpecLoadError extends Error {
  override readonly name = 'SpecLoadError';
}

async function parseDocument(text: string, where: string): Promise<unknown> {
  try {
    return JSON.parse(text);
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

const MAX_SPEC_BYTES = 10 * 1024 * 1024;
const ATTEMPTS = 3;

class SpecHttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

/**
 * One GET with node:http(s), not the resilient client: it answers before the client's undici
 * has loaded (about 120 ms), which is most of the gateway's start-up. Bounded in time and size.
 */
async function getText(url: URL, headers: Record<string, string>): Promise<string> {
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, timeout: 30_000 }, (res) => {
      if ((res.statusCode ?? 0) >= 300) {
        res.resume();
        reject(new SpecHttpError(res.statusCode ?? 0));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_SPEC_BYTES) req.destroy(new Error(`the document is larger than ${MAX_SPEC_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * @param source an http(s) URL or a file path
 * @param headers sent with a URL fetch (the upstream key, when the document lives upstream)
 */
export async function loadSpec(source: string, headers: Record<string, string> = {}): Promise<unknown> {
  if (/^https?:\/\//i.test(source)) {
    const url = new URL(source);
    const sent = { accept: 'application/json, application/yaml;q=0.9, */*;q=0.1', ...headers };
    // A few tries with a short pause: the API may still be starting (connection refused, 5xx).
    for (let attempt = 1; ; attempt++) {
      try {
        return await parseDocument(await getText(url, sent), source);
      } catch (error) {
        if (error instanceof SpecLoadError) throw error;
        const status = error instanceof SpecHttpError ? error.status : undefined;
        const retryable = status === undefined || status >= 500 || status === 429;
        if (!retryable || attempt >= ATTEMPTS) {
          throw new SpecLoadError(
            status !== undefined
              ? `fetching the OpenAPI document from ${source} answered HTTP ${status}`
              : `cannot fetch the OpenAPI document from ${source}: ${(error as Error).message}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (attempt - 1)));
      }
    }
  }
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (error) {
    throw new SpecLoadError(`cannot read the OpenAPI document ${source}: ${(error as Error).message}`);
  }
  return parseDocument(text, source);
}
