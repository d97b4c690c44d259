// What a server allocates per tools/call, and what of it reaches V8's old generation: the
// memory side of issue 41's CPU rows. Starts the toy API and the server, warms it up, then
// sends CALLS calls with autocannon (32 connections) while V8's GC profiler runs inside it, and
// prints, per call: own CPU, bytes allocated, bytes promoted by young collections, and the time
// in young (scavenge) and full (mark-compact) collections.
// --by-function adds the top allocating functions (V8's sampling heap profiler, garbage
// included); --survivors the top functions whose objects outlived a young collection.
// Extra node flags for the server after `--`, e.g. `-- --max-semi-space-size=32`.
// toy-api and bare (comparison 1's sides) take GET /emails instead, the payload ignored.
// Usage: node bench/allocations.mjs [gateway|passthrough|toy-api|bare] [office_days|emails-2|emails-50] [CALLS]
//          [--by-function | --survivors] [-- NODE_FLAGS...]   (run `pnpm build` first)
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchRunner, gatewaySession, mcpHeaders, sessionHeaders } from './lib/shared-servers.mjs';
import { cpuMicros, runJson, startProcess } from './lib/util.mjs';

const dash = process.argv.indexOf('--');
const ours = dash === -1 ? process.argv.slice(2) : process.argv.slice(2, dash);
const nodeFlags = dash === -1 ? [] : process.argv.slice(dash + 1);
const sample = ours.includes('--by-function') ? 'all' : ours.includes('--survivors') ? 'survivors' : undefined;
const [serverName = 'gateway', payloadName = 'office_days', callsArg = '20000'] = ours.filter(
  (a) => !a.startsWith('--'),
);
const SERVERS = {
  gateway: 'servers/gateway-http.mjs',
  passthrough: 'servers/passthrough.mjs',
  'toy-api': 'servers/toy-api.mjs',
  bare: 'servers/bare-json.mjs',
};
const PAYLOADS = {
  office_days: { name: 'office_days', arguments: { employee_id: 'e-05' } },
  'emails-2': { name: 'list_emails', arguments: { limit: 2 } },
  'emails-50': { name: 'list_emails', arguments: { limit: 50 } },
};
const calls = Number(callsArg);
if (!SERVERS[serverName] || !PAYLOADS[payloadName] || !Number.isInteger(calls) || calls < 1000) {
  console.error(
    'usage: node bench/allocations.mjs [gateway|passthrough|toy-api|bare] [office_days|emails-2|emails-50] [CALLS >= 1000] [--by-function | --survivors] [-- NODE_FLAGS...]',
  );
  process.exit(2);
}

const key = 'k'.repeat(32);
const token = 't'.repeat(32);
const out = join(tmpdir(), `agentwire-allocations-${process.pid}.json`);
const api = await startProcess('servers/toy-api.mjs', [key]);
const runner = fetchRunner(token);
const emails = join(tmpdir(), `agentwire-allocations-${process.pid}-emails.json`);
if (serverName === 'bare') {
  // The toy API's own answer, for the bare route to serve (as comparison 1 does).
  const page = await fetch(`${api.line}/emails`, { headers: { authorization: `Bearer ${key}` } });
  writeFileSync(emails, await page.text());
}
const serverArgs = {
  gateway: [api.line, key, token],
  passthrough: [api.line, key],
  'toy-api': [key],
  bare: [emails],
}[serverName];
const target = await startProcess(SERVERS[serverName], serverArgs, {
  nodeArgs: [...nodeFlags, '--import', new URL('./lib/gc-probe.mjs', import.meta.url).href],
  env: { ALLOC_OUT: out, ...(sample ? { ALLOC_SAMPLE: sample } : {}) },
});
let options;
if (serverName === 'toy-api' || serverName === 'bare') {
  const auth = { authorization: `Bearer ${key}` };
  options = { url: `${target.line}/emails`, method: 'GET', headers: auth, connections: 32, rejectIsError: true };
} else {
  const headers =
    serverName === 'gateway' ? sessionHeaders(runner, await gatewaySession(runner, target.line)) : mcpHeaders;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: PAYLOADS[payloadName] });
  options = { url: target.line, method: 'POST', headers, body, connections: 32, rejectIsError: true };
}
await runJson('clients/autocannon.mjs', { ...options, amount: 3000 }); // warm up: the JIT, the pools

process.kill(target.pid, 'SIGUSR2');
await new Promise((resolve) => setTimeout(resolve, 300));
const cpuBefore = cpuMicros(target.pid);
const result = await runJson('clients/autocannon.mjs', { ...options, amount: calls });
const cpuUs = (cpuMicros(target.pid) - cpuBefore) / result.total;
process.kill(target.pid, 'SIGUSR2');
let written;
for (let i = 0; i < 100 && !written; i++) {
  await new Promise((resolve) => setTimeout(resolve, 200));
  try {
    written = JSON.parse(readFileSync(out, 'utf8'));
  } catch {
    // not written yet
  }
}
await target.stop();
await api.stop();
rmSync(out, { force: true });
rmSync(emails, { force: true });
const failed = result.non2xx + result.errors + result.timeouts + result.mismatches;
if (!written || failed > 0) throw new Error(`no GC record, or ${failed} of ${result.total} calls failed`);

const n = result.total;
const old = (stats) => stats.heapSpaceStatistics.find((s) => s.spaceName === 'old_space').spaceUsedSize;
let allocated = 0;
let promoted = 0;
let previousAfter;
const ms = { Scavenge: 0, MarkSweepCompact: 0 };
const count = { Scavenge: 0, MarkSweepCompact: 0 };
for (const s of written.gc.statistics) {
  // Allocated between two collections: the heap before this one less the heap after the last.
  if (previousAfter !== undefined) allocated += s.beforeGC.heapStatistics.usedHeapSize - previousAfter;
  previousAfter = s.afterGC.heapStatistics.usedHeapSize;
  if (s.gcType === 'Scavenge') promoted += old(s.afterGC) - old(s.beforeGC);
  if (s.gcType in ms) {
    ms[s.gcType] += s.cost / 1000;
    count[s.gcType]++;
  }
}
const kb = (bytes) => `${(bytes / n / 1024).toFixed(2)} KB`;
console.log(
  `${serverName} ${payloadName}${nodeFlags.length ? ` (${nodeFlags.join(' ')})` : ''}, ${n} calls, per call:`,
);
console.log(
  `  own CPU ${cpuUs.toFixed(0)} µs; allocated ${kb(allocated)}; promoted by young collections ${kb(promoted)}`,
);
console.log(
  `  young collections ${count.Scavenge} (${((ms.Scavenge * 1000) / n).toFixed(1)} µs a call), full ${count.MarkSweepCompact} (${((ms.MarkSweepCompact * 1000) / n).toFixed(1)} µs a call)`,
);
if (written.profile) {
  const bySite = new Map();
  const walk = (node) => {
    const f = node.callFrame;
    const where = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    if (node.selfSize) bySite.set(where, (bySite.get(where) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(written.profile.head);
  console.log(
    sample === 'all' ? '  allocated by function (sampled):' : '  outlived a young collection, by function (sampled):',
  );
  for (const [where, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`  ${String(Math.round(bytes / n)).padStart(7)} B  ${where}`);
  }
}
