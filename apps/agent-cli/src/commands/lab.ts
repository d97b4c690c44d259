// `agent lab 1|2|3|4`: the lecture's demos, run against the real stack and measured now.
import { parseArgs } from 'node:util';
import { externalStack, startEmbeddedStack } from '../embedded-stack.js';
import { EXIT } from '../exit-codes.js';
import { lab1 } from '../labs/lab1-http.js';
import { lab2 } from '../labs/lab2-json.js';
import { lab3 } from '../labs/lab3-client.js';
import { lab4 } from '../labs/lab4-mcp.js';
import { UsageError } from '../usage-error.js';

export async function labCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { trace: { type: 'boolean' }, 'api-url': { type: 'string' }, 'mcp-url': { type: 'string' } },
  });
  const which = positionals[0];
  if (!which || !['1', '2', '3', '4'].includes(which) || positionals.length > 1) {
    throw new UsageError('usage: agent lab 1|2|3|4 (1: HTTP, 2: JSON and validation, 3: a reliable client, 4: MCP)');
  }
  const print = (text: string) => process.stdout.write(`${text}\n`);
  if (which === '2') {
    await lab2(print);
    return EXIT.ok;
  }
  const apiUrl = values['api-url'] ?? process.env.AGENTWIRE_API_URL;
  const stack = apiUrl
    ? externalStack(apiUrl, values['mcp-url'] ?? process.env.AGENTWIRE_MCP_URL, process.env)
    : await startEmbeddedStack();
  try {
    if (which === '1') await lab1(stack, print);
    // Labs 1 and 4 print the wire as their lesson; lab 3 also traces its clients with --trace.
    if (which === '3') await lab3(stack, print, values.trace === true);
    if (which === '4') await lab4(stack, print);
    return EXIT.ok;
  } finally {
    await stack.close();
  }
}
