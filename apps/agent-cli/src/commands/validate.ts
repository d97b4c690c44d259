// `agent validate --schema FILE|JSON --args JSON`: checks tool arguments against an input schema
// with the gateway's own validator, and prints what a model would read (the lecture's exercise 4).
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { compileArgumentsValidator, invalidArgumentsText } from '@agentwire/mcp-gateway';
import { EXIT } from '../exit-codes.js';
import { print } from '../print.js';
import { UsageError } from '../usage-error.js';

/** A schema and its arguments are typed or kept in small files. */
const MAX_INPUT_BYTES = 256 * 1024;

function parseJson(what: string, text: string): unknown {
  if (Buffer.byteLength(text) > MAX_INPUT_BYTES) throw new UsageError(`${what} is over ${MAX_INPUT_BYTES} bytes`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not JSON: ${(error as Error).message}`);
  }
}

async function schemaFrom(value: string): Promise<{ schema: unknown; name: string | undefined }> {
  if (value.trimStart().startsWith('{')) return { schema: parseJson('--schema', value), name: undefined };
  let text: string;
  try {
    text = await readFile(value, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--schema ${value}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a file or a JSON object`,
    );
  }
  return { schema: parseJson(`--schema ${value}`, text), name: basename(value).split('.')[0] };
}

export async function validateCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { schema: { type: 'string' }, args: { type: 'string' }, name: { type: 'string' } },
  });
  if (!values.schema || values.args === undefined) {
    throw new UsageError('usage: agent validate --schema FILE|JSON --args JSON [--name TOOL]');
  }
  const { schema, name: fromFile } = await schemaFrom(values.schema);
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new UsageError('--schema must be a JSON Schema object, such as {"type": "object", "properties": {...}}');
  }
  const args = parseJson('--args', values.args);
  const name = values.name ?? fromFile ?? 'the_tool';
  let check: ReturnType<typeof compileArgumentsValidator>;
  try {
    check = compileArgumentsValidator(schema);
  } catch (error) {
    throw new UsageError(`--schema is not a schema the validator can use: ${(error as Error).message}`);
  }
  const result = check(args);
  if (result.ok) {
    print(`valid: ${name} takes ${JSON.stringify(args)}\n`);
    return EXIT.ok;
  }
  print(`${invalidArgumentsText(name, result.errors)}\n`);
  return EXIT.taskFailed;
}
