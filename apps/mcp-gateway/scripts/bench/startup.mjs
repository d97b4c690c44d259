// How fast the gateway answers initialize over stdio after being spawned: with the toy API's
// document (fetched from the running API) and with a generated document of 500 operations
// (from a file). Median of several runs. Usage: node scripts/bench/startup.mjs [--runs 7]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildApp } from '@agentwire/toy-api';

const runs = Number(parseArgs({ options: { runs: { type: 'string' } } }).values.runs ?? 7);
const BIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const key = `startup-${Date.now()}`;
const api = await buildApp({ apiKey: key });
await api.listen({ host: '127.0.0.1', port: 0 });
const upstream = `http://127.0.0.1:${api.server.address().port}`;

const big = { openapi: '3.1.0', info: { title: 'Big', version: '1' }, paths: {} };
for (let i = 0; i < 500; i++) {
  big.paths[`/things${i}/{id}`] = {
    get: {
      operationId: `get_thing_${i}`,
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: {
          description: 'ok',
          content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } },
        },
      },
    },
  };
}
const bigFile = join(tmpdir(), `agentwire-500-ops-${process.pid}.json`);
writeFileSync(bigFile, JSON.stringify(big));

async function once(openapi) {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, '--stdio'], {
    env: {
      PATH: process.env.PATH,
      UPSTREAM_URL: upstream,
      UPSTREAM_API_KEY: key,
      ...(openapi ? { OPENAPI_URL: openapi } : {}),
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const lines = createInterface({ input: child.stdout });
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'b', version: '1' } } })}\n`,
  );
  await new Promise((resolve) => lines.once('line', resolve));
  const ms = performance.now() - started;
  child.kill();
  return ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const toyRuns = [];
const bigRuns = [];
for (let i = 0; i < runs; i++) {
  toyRuns.push(await once(undefined));
  bigRuns.push(await once(bigFile));
}
console.log(`stdio: spawn to initialize answered, median of ${runs} runs, Node ${process.version}`);
console.table([
  {
    spec: 'toy API (13 operations, fetched)',
    'median ms': Math.round(median(toyRuns)),
    'max ms': Math.round(Math.max(...toyRuns)),
  },
  {
    spec: 'generated (500 operations, file)',
    'median ms': Math.round(median(bigRuns)),
    'max ms': Math.round(Math.max(...bigRuns)),
  },
]);
await api.close();
