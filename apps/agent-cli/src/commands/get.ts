// `agent get PATH`: one GET against the API through the resilient client, with its retry
// settings on the command line to see what they add up to (the lecture's exercise 2).
import { HttpClient, Ledger } from '@agentwire/http-client';
import { EXIT } from '../exit-codes.js';
import { print, printError } from '../print.js';
import { UsageError } from '../usage-error.js';
import { tracingLedger } from '../wire-trace.js';
import { parseCommand, STACK_OPTIONS, stackOf } from './command-args.js';

const GET_USAGE = "usage: agent get PATH (starting with '/', e.g. /employees?team=legal)";

export async function getCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    argv,
    {
      ...STACK_OPTIONS,
      'max-retries': { type: 'string' },
      'base-delay': { type: 'string' },
      timeout: { type: 'string' },
      'no-jitter': { type: 'boolean' },
      'no-retry-budget': { type: 'boolean' },
    },
    GET_USAGE,
    1,
  );
  const path = positionals[0];
  if (!path?.startsWith('/')) throw new UsageError(GET_USAGE);
  // The retry settings, for seeing what they add up to (the lecture's exercise 2).
  const number = (flag: string, value: string | undefined, min: number, max: number) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new UsageError(`--${flag} must be from ${min} to ${max}, got '${value}'`);
    return n;
  };
  const maxRetries = number('max-retries', values['max-retries'], 0, 10);
  const baseDelay = number('base-delay', values['base-delay'], 0, 60);
  const timeout = number('timeout', values.timeout, 0.05, 300);
  if (maxRetries !== undefined && !Number.isInteger(maxRetries))
    throw new UsageError('--max-retries must be an integer');
  const retrySettings =
    maxRetries !== undefined ||
    baseDelay !== undefined ||
    values['no-jitter'] === true ||
    values['no-retry-budget'] === true;
  const stack = await stackOf({ 'api-url': values['api-url'] });
  const ledger = tracingLedger(values.trace === true) ?? new Ledger();
  const client = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger,
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    ...(timeout !== undefined ? { timeoutMs: Math.round(timeout * 1000) } : {}),
    // The budget stops retries after a run of failures (the lecture's client has none).
    ...(values['no-retry-budget'] ? { retryBudget: false as const } : {}),
    backoff: {
      ...(baseDelay !== undefined ? { baseMs: Math.round(baseDelay * 1000) } : {}),
      ...(values['no-jitter'] ? { jitter: 0 } : {}),
    },
  });
  try {
    const url = new URL(path, 'http://x');
    const response = await client.get(url.pathname, { query: Object.fromEntries(url.searchParams) });
    print(`${typeof response.data === 'string' ? response.data : JSON.stringify(response.data, null, 2)}\n`);
    return EXIT.ok;
  } catch (error) {
    print(`${(error as Error).message}\n`);
    return EXIT.taskFailed;
  } finally {
    if (retrySettings) {
      const waits = ledger.attempts.filter((a) => a.waitMs > 0).map((a) => a.waitMs / 1000);
      const waited = waits.reduce((sum, w) => sum + w, 0);
      printError(
        `attempts: ${ledger.attempts.length}; waits before the retries: [${waits.join(', ')}] s, ${Number(waited.toFixed(3))} s in all\n`,
      );
    }
    await client.close();
    await stack.close();
  }
}
