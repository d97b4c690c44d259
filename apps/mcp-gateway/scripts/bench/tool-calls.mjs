// Side by side: tools/call per second through our gateway, the official SDK's stateless HTTP
// serving, and a bare Fastify + undici passthrough (the floor for one extra hop), all to the
// same toy API route. Each server is its own process; the load comes from this one. Rounds are
// interleaved and medians reported, because these machines are shared and noisy.
// Usage: node scripts/bench/tool-calls.mjs [--rounds 3] [--seconds 3] [--connections 32]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildApp } from '@agentwire/toy-api';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: { rounds: { type: 'string' }, seconds: { type: 'string' }, connections: { type: 'string' } },
});
const rounds = Number(values.rounds ?? 3);
const seconds = Number(values.seconds ?? 3);
const connections = Number(values.connections ?? 32);

// The upstream runs in its own process too.
const key = `bench-${Date.now()}`;
const toy = spawn(
  process.execPath,
  [
    '-e',
    `
  import('@agentwire/toy-api').then(async ({ buildApp }) => {
    const app = await buildApp({ apiKey: ${JSON.stringify(key)} });
    await app.listen({ host: '127.0.0.1', port: 0 });
    console.log('http://127.0.0.1:' + app.server.address().port);
  });`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'], cwd: fileURLToPath(new URL('../..', import.meta.url)) },
);
const firstLine = async (child) => (await once(createInterface({ input: child.stdout }), 'line'))[0];
const upstream = await firstLine(toy);
void buildApp;

const kinds = ['gateway', 'sdk-v1', 'passthrough'];
const servers = {};
for (const kind of kinds) {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('./servers.mjs', import.meta.url)), kind, upstream, key],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  servers[kind] = { child, url: await firstLine(child) };
}

const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
async function gatewaySession(url) {
  const r = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  return r.headers.get('mcp-session-id');
}
const extra = {
  gateway: { 'mcp-session-id': await gatewaySession(servers.gateway.url), 'mcp-protocol-version': '2025-11-25' },
  'sdk-v1': { 'mcp-protocol-version': '2025-11-25' },
  passthrough: {},
};
const bodies = {
  gateway: { name: 'office_days', arguments: { employee_id: 'e-05' } },
  'sdk-v1': { name: 'office_days', arguments: {} },
  passthrough: { name: 'office_days', arguments: {} },
};

async function load(kind) {
  const url = new URL(servers[kind].url);
  const pool = new Pool(url.origin, { connections });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: bodies[kind] });
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  const latencies = [];
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const r = await pool.request({
          path: url.pathname,
          method: 'POST',
          headers: { ...headers, ...extra[kind] },
          body,
        });
        const text = await r.body.text();
        if (r.statusCode !== 200 || text.includes('"isError":true') || text.includes('"error"')) errors++;
        else done++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { rps: done / seconds, errors, p50: latencies[Math.floor(latencies.length / 2)] ?? 0 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = Object.fromEntries(kinds.map((k) => [k, []]));
for (let round = 0; round < rounds; round++) {
  for (const kind of kinds) results[kind].push(await load(kind));
}
const table = kinds.map((kind) => {
  const rps = median(results[kind].map((r) => r.rps));
  return {
    server: kind,
    'calls/s (median)': Math.round(rps),
    'p50 ms (median)': Number(median(results[kind].map((r) => r.p50)).toFixed(2)),
    errors: results[kind].reduce((n, r) => n + r.errors, 0),
  };
});
console.log(
  `tool calls over Streamable HTTP, ${rounds} interleaved rounds of ${seconds} s, ${connections} connections, Node ${process.version}`,
);
console.table(table);
const g = table[0]['calls/s (median)'];
console.log(
  `gateway / sdk-v1: ${(g / table[1]['calls/s (median)']).toFixed(2)}x   gateway / passthrough: ${(g / table[2]['calls/s (median)']).toFixed(2)}`,
);
for (const { child } of Object.values(servers)) child.kill();
toy.kill();
