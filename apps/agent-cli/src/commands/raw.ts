// `agent raw FILE|-`: bytes from a file or stdin, sent to the API over a plain TCP socket exactly
// as they are (CRLF or not, any Content-Length), and the raw answer printed. For reading and
// breaking HTTP by hand (the lecture's exercise 1). {{HOST}}, {{API_KEY}} and {{READONLY_KEY}} in
// the bytes are filled in first, so a request file works against a stack whose port and key are fresh.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { externalStack, startEmbeddedStack } from '../embedded-stack.js';
import { EXIT } from '../exit-codes.js';
import { LAB1_REQUEST_TIMEOUT_MS, rawRequest } from '../labs/lab1-http.js';
import { print, printError } from '../print.js';
import { UsageError } from '../usage-error.js';

/** What `agent raw` reads at most: a request someone typed, or one just over the API's 64 KiB body limit. */
export const MAX_RAW_BYTES = 128 * 1024;
const DEFAULT_WAIT_MS = 5000;

async function readInput(source: string): Promise<Buffer> {
  if (source !== '-') {
    try {
      return await readFile(source);
    } catch (error) {
      throw new UsageError(
        `cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function rawCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      crlf: { type: 'boolean' },
      'wait-ms': { type: 'string' },
      'api-url': { type: 'string' },
    },
  });
  const source = positionals[0];
  if (!source || positionals.length > 1) {
    throw new UsageError(
      'usage: agent raw FILE|- [--crlf] [--wait-ms N] (the request bytes, sent as they are; {{HOST}}, {{API_KEY}}, {{READONLY_KEY}} filled in)',
    );
  }
  const waitMs = Number(values['wait-ms'] ?? DEFAULT_WAIT_MS);
  if (!Number.isInteger(waitMs) || waitMs < 100 || waitMs > 60_000) {
    throw new UsageError(`--wait-ms must be an integer from 100 to 60000, got '${values['wait-ms']}'`);
  }
  let bytes = await readInput(source);
  if (bytes.length === 0)
    throw new UsageError(`${source === '-' ? 'stdin' : source} is empty: there is nothing to send`);
  if (bytes.length > MAX_RAW_BYTES) {
    throw new UsageError(
      `${source} is ${bytes.length} bytes; agent raw sends at most ${MAX_RAW_BYTES} (MAX_RAW_BYTES)`,
    );
  }
  // --crlf: a request typed in an editor has bare LFs; HTTP wants CRLF. Off by default, so
  // that what the file says is what is sent.
  if (values.crlf) bytes = Buffer.from(bytes.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');

  const apiUrl = values['api-url'] ?? process.env.AGENTWIRE_API_URL;
  // The embedded API gives up on a body that never comes after 1.5 s instead of 30 s.
  const stack = apiUrl
    ? externalStack(apiUrl, undefined, process.env)
    : await startEmbeddedStack(process.env, { requestTimeoutMs: LAB1_REQUEST_TIMEOUT_MS });
  try {
    const filled = bytes
      .toString('latin1')
      .replaceAll('{{HOST}}', new URL(stack.apiUrl).host)
      .replaceAll('{{API_KEY}}', stack.apiKey)
      .replaceAll('{{READONLY_KEY}}', stack.readOnlyKey ?? '');
    if (stack.readOnlyKey === undefined && bytes.includes('{{READONLY_KEY}}'))
      throw new UsageError('{{READONLY_KEY}} needs a read-only key: set TOY_API_READONLY_KEY for a running API');
    const started = performance.now();
    const answer = await rawRequest(stack.apiUrl, Buffer.from(filled, 'latin1'), waitMs);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    printError(
      `agent raw: sent ${Buffer.byteLength(filled, 'latin1')} bytes to ${new URL(stack.apiUrl).host}; ` +
        `${answer ? `${Buffer.byteLength(answer)} bytes came back` : 'nothing came back'} in ${seconds} s\n`,
    );
    const shown = answer.replaceAll(stack.apiKey, '[API_KEY]');
    print(stack.readOnlyKey ? shown.replaceAll(stack.readOnlyKey, '[READONLY_KEY]') : shown);
    if (answer && !answer.endsWith('\n')) print('\n');
    return answer ? EXIT.ok : EXIT.taskFailed;
  } finally {
    await stack.close();
  }
}
