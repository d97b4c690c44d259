// `agent call TOOL`: one tool call through the gateway, its result as it came.
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { approveEverything } from '../elicitation.js';
import { EXIT } from '../exit-codes.js';
import { print } from '../print.js';
import { UsageError } from '../usage-error.js';
import { GATEWAY_OPTIONS, parseCommand, STACK_OPTIONS, stackOf, viaOf, withMcp } from './command-args.js';

const CALL_USAGE =
  'usage: agent call TOOL [--args JSON] [--via mcp-stdio|mcp-http] [--idempotency-key KEY] [--approve]';

export async function callCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    argv,
    {
      ...STACK_OPTIONS,
      ...GATEWAY_OPTIONS,
      args: { type: 'string', default: '{}' },
      'idempotency-key': { type: 'string' },
    },
    CALL_USAGE,
    1,
  );
  const tool = positionals[0];
  if (!tool) throw new UsageError(CALL_USAGE);
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(values.args ?? '{}');
  } catch (error) {
    throw new UsageError(`--args must be a JSON object: ${(error as Error).message}`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new UsageError('--args must be a JSON object');
  const via = viaOf(values.via, values);
  if (via === 'api')
    throw new UsageError(
      'agent call goes through the gateway: use --via mcp-stdio or mcp-http (or agent get for the API)',
    );
  approveEverything(values.approve === true);
  const key = values['idempotency-key'];
  // The gateway dedupes a write named by a key: the same key again gets the first result. And
  // the result shows what the gateway did upstream (its report, sent when asked for).
  const meta = {
    [UPSTREAM_REPORT_KEY]: true,
    ...(key === undefined ? {} : { 'agentwire.dev/idempotencyKey': key }),
  };
  const stack = await stackOf(values, via);
  try {
    // A long job (an operation that answers 202, followed by the gateway) shows how it goes.
    const onProgress = (n: number, message: string | undefined) =>
      process.stderr.write(`  progress ${n}${message ? `: ${message}` : ''}\n`);
    const result = await withMcp(
      stack,
      via,
      values.trace === true,
      (b) => b.rawCall(tool, args, onProgress, meta),
      values['sign-in'],
    );
    print(`${JSON.stringify(result, null, 2)}\n`);
    return result.isError ? EXIT.taskFailed : EXIT.ok;
  } finally {
    await stack.close();
  }
}
