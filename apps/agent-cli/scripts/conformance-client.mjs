#!/usr/bin/env node
// The agent as the official conformance suite's client: the suite runs this with the scenario's
// server URL last and its context in MCP_CONFORMANCE_CONTEXT (a pre-registered client, say).
// It maps that context onto the agent's own settings and runs the real `agent` command: list
// the tools, then call the first one with a value of the right type for each required argument
// (what a model would fill in), signing in by following the authorization server's
// redirects (the suite's server approves without a page).
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const AGENT = fileURLToPath(new URL('../dist/main.js', import.meta.url));
// The Client ID Metadata Document the suite's authorization server knows (auth/basic-cimd).
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';

const serverUrl = process.argv.at(-1);
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const env = {
  PATH: process.env.PATH ?? '',
  AGENTWIRE_TOKEN_FILE: join(mkdtempSync(join(tmpdir(), 'conformance-tokens-')), 'tokens.json'),
  AGENTWIRE_CLIENT_METADATA_URL: CIMD_URL,
  ...(context.client_id ? { AGENTWIRE_OAUTH_CLIENT_ID: context.client_id } : {}),
  ...(context.client_secret ? { AGENTWIRE_OAUTH_CLIENT_SECRET: context.client_secret } : {}),
};
const agent = (args) => {
  const run = spawnSync(
    process.execPath,
    [AGENT, ...args, '--via', 'mcp-http', '--mcp-url', serverUrl, '--sign-in', 'follow'],
    {
      env,
      encoding: 'utf8',
    },
  );
  process.stdout.write(run.stdout ?? '');
  process.stderr.write(run.stderr ?? '');
  return run;
};
const listed = agent(['tools', '--format', 'json']);
if (listed.status !== 0) process.exit(listed.status ?? 1);
let tools = [];
try {
  tools = JSON.parse(listed.stdout).tools;
} catch {
  tools = [];
}
const first = tools[0];
if (!first?.name) process.exit(0);
// What a scenario asks the client to do beyond one call (a model would choose these values):
// http-custom-headers wants a value that needs Base64 in its Mcp-Param header, and a call of a
// second tool with a mirrored argument left null.
// json-schema-2020-12-preservation asks for a tool's inputSchema, as the agent received it, to
// be passed back through its echo tool (the one taking a `schema` object): what survived the
// agent's parsing is what the suite compares.
const echo = tools.find((t) => t.inputSchema?.properties?.schema?.type === 'object');
const focal = tools.find((t) => t !== echo);
const CALLS = {
  // Every tool the agent kept, as a model free to use them all would: a tool whose x-mcp-header
  // is invalid must not be among them (SEP-2243: the client leaves it out).
  'http-invalid-tool-headers': tools.map((t) => [t.name, sampleArguments(t.inputSchema)]),
  // Each multi round-trip tool: the agent answers the input request (it declines: no terminal
  // here) and its SDK retries with the answer and the requestState echoed, under a new id.
  'sep-2322-client-request-state': tools.map((t) => [t.name, sampleArguments(t.inputSchema)]),
  'json-schema-2020-12-preservation': echo && focal ? [[echo.name, { schema: focal.inputSchema }]] : [],
  'http-custom-headers': [
    ['test_custom_headers', { region: 'Zürich', priority: 1, query: 'weather' }],
    ['test_custom_headers_null', { region: 'eu-west', priority: 2, query: 'weather', verbose: null }],
  ],
};
const calls = CALLS[process.env.MCP_CONFORMANCE_SCENARIO ?? ''] ?? [[first.name, sampleArguments(first.inputSchema)]];
// A call that ends in an error ends the run, except where the scenario's server answers some
// calls with what a client must refuse (a result without resultType on 2026-07-28).
const keepGoing = process.env.MCP_CONFORMANCE_SCENARIO === 'sep-2322-client-request-state';
for (const [name, args] of calls) {
  const called = agent(['call', name, '--args', JSON.stringify(args)]);
  if (called.status !== 0 && !keepGoing) process.exit(called.status ?? 1);
}
process.exit(0);

/** A value of the declared type for each required argument: what a model would fill in. */
function sampleArguments(schema) {
  const sample = { number: 2, integer: 2, boolean: true, string: 'sample', array: [], object: {} };
  const out = {};
  for (const name of schema?.required ?? []) {
    const property = schema.properties?.[name] ?? {};
    const type = Array.isArray(property.type) ? property.type[0] : property.type;
    out[name] = property.enum?.[0] ?? sample[type] ?? 'sample';
  }
  return out;
}
