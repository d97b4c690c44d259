// `agent lab 1|2|3|4`: the lecture's demos, run against the real stack and measured now. As
// tables for a terminal, or with --json as one document (for a notebook or a test).
import { parseArgs } from 'node:util';
import { externalStack, startEmbeddedStack } from '../embedded-stack.js';
import { EXIT } from '../exit-codes.js';
import { LabReport } from '../labs/lab-report.js';
import { LAB1_REQUEST_TIMEOUT_MS, lab1 } from '../labs/lab1-http.js';
import { lab2 } from '../labs/lab2-json.js';
import { lab3 } from '../labs/lab3-client.js';
import { LAB4_VERSIONS, lab4 } from '../labs/lab4-mcp.js';
import { print } from '../print.js';
import { UsageError } from '../usage-error.js';

const TITLES: Record<string, string> = {
  '1': 'HTTP on the wire',
  '2': 'JSON and validation',
  '3': 'a reliable client',
  '4': 'MCP',
};

export async function labCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      trace: { type: 'boolean' },
      json: { type: 'boolean' },
      'api-url': { type: 'string' },
      'mcp-url': { type: 'string' },
      'protocol-version': { type: 'string' },
      'no-key': { type: 'boolean' },
    },
  });
  const which = positionals[0];
  if (!which || !(which in TITLES) || positionals.length > 1) {
    throw new UsageError(
      'usage: agent lab 1|2|3|4 [--json] (1: HTTP, 2: JSON and validation, 3: a reliable client, 4: MCP); lab 3 takes --no-key, lab 4 --protocol-version V',
    );
  }
  const version = values['protocol-version'];
  if (version !== undefined && which !== '4') throw new UsageError('--protocol-version is for lab 4 (MCP)');
  if (version !== undefined && !LAB4_VERSIONS.includes(version)) {
    throw new UsageError(`--protocol-version must be one of ${LAB4_VERSIONS.join(', ')}; got '${version}'`);
  }
  if (values['no-key'] && which !== '3')
    throw new UsageError('--no-key is for lab 3 (its demo 6 retries a reply without an idempotency key)');
  const json = values.json === true;
  const report = new LabReport(Number(which), TITLES[which] as string, json ? undefined : (text) => print(`${text}\n`));
  const apiUrl = values['api-url'] ?? process.env.AGENTWIRE_API_URL;
  const mcpUrl = values['mcp-url'] ?? process.env.AGENTWIRE_MCP_URL;
  if (which === '4' && apiUrl && !mcpUrl) {
    throw new UsageError('lab 4 talks to a gateway: with --api-url, give --mcp-url (or AGENTWIRE_MCP_URL) too');
  }
  const stack = apiUrl
    ? externalStack(apiUrl, mcpUrl, process.env)
    : await startEmbeddedStack(process.env, which === '1' ? { requestTimeoutMs: LAB1_REQUEST_TIMEOUT_MS } : {});
  try {
    if (which === '1') await lab1(stack, report);
    if (which === '2') await lab2(stack, report);
    // Labs 1 and 4 print the wire as their lesson; lab 3 also traces its clients with --trace.
    if (which === '3') await lab3(stack, report, values.trace === true, values['no-key'] === true);
    if (which === '4') await lab4(stack, report, version);
  } finally {
    await stack.close();
  }
  if (json) print(`${JSON.stringify(report, null, 2)}\n`);
  return EXIT.ok;
}
