// Where a server's own CPU goes on one tools/call payload: starts the toy API and the server
// under `node --cpu-prof`, sends a fixed number of calls with autocannon, stops the server (the
// profile is written on exit) and prints the profile's top functions by self time, the same
// grouped by where the code lives, and the inclusive time of our own functions.
// With --syscalls, it first counts the server's system calls per call under `strace -c` (a count,
// not a time: it does not move with the machine's load, where CPU per call does).
// Over stdio (`gateway-stdio`, `floor-stdio`: comparison 4's floor), the calls come from
// clients/stdio.mjs (office_days, one at a time, then 32 in flight), which reads the CPU per call.
// Usage: node bench/profile.mjs [gateway|passthrough|gateway-stdio|floor-stdio|toy-api|bare] [office_days|emails-2|emails-50] [CALLS] [--syscalls]
//        (toy-api and bare: GET /emails, the payload ignored)
//        (run `pnpm build` first; the .cpuprofile is kept, for Chrome DevTools or speedscope)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATEWAY_BIN } from '@agentwire/mcp-gateway';
import { fetchRunner, gatewaySession, mcpHeaders, sessionHeaders } from './lib/shared-servers.mjs';
import { cpuMicros, runJson, startProcess } from './lib/util.mjs';

const SERVERS = {
  gateway: { script: 'servers/gateway-http.mjs', args: (api, key, token) => [api, key, token] },
  passthrough: { script: 'servers/passthrough.mjs', args: (api, key) => [api, key] },
  'gateway-stdio': { stdio: [GATEWAY_BIN, '--stdio'] },
  'floor-stdio': { stdio: ['servers/stdio-floor.mjs'] },
  // GET /emails (comparison 1): the toy API, and a bare Fastify route answering its same JSON.
  'toy-api': { script: 'servers/toy-api.mjs', args: (_api, key) => [key], get: true },
  bare: { script: 'servers/bare-json.mjs', args: () => [emailsFile], get: true },
};
const PAYLOADS = {
  office_days: { name: 'office_days', arguments: { employee_id: 'e-05' } },
  'emails-2': { name: 'list_emails', arguments: { limit: 2 } },
  'emails-50': { name: 'list_emails', arguments: { limit: 50 } },
};
const args = process.argv.slice(2).filter((a) => a !== '--syscalls');
const countSyscalls = process.argv.includes('--syscalls');
const [serverName = 'gateway', payloadName = 'office_days', callsArg = '20000'] = args;
const server = SERVERS[serverName];
const payload = PAYLOADS[payloadName];
const calls = Number(callsArg);
if (
  !server ||
  !payload ||
  !Number.isInteger(calls) ||
  calls < 100 ||
  (server.stdio && (countSyscalls || payloadName !== 'office_days'))
) {
  console.error(
    `usage: node bench/profile.mjs [${Object.keys(SERVERS).join('|')}] [${Object.keys(PAYLOADS).join('|')}] [CALLS >= 100] [--syscalls]` +
      ' (stdio: office_days only, no --syscalls)',
  );
  process.exit(2);
}

const key = 'k'.repeat(32);
const token = 't'.repeat(32);
const dir = mkdtempSync(join(tmpdir(), 'agentwire-profile-'));
const api = await startProcess('servers/toy-api.mjs', [key]);
const runner = fetchRunner(token);
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: payload });
// The toy API's GET /emails as it answers it, for the bare route to serve.
const emailsFile = join(dir, 'emails.json');
if (server.get) {
  const emails = await fetch(`${api.line}/emails`, { headers: { authorization: `Bearer ${key}` } });
  writeFileSync(emailsFile, await emails.text());
}

/** Starts the server (with a session when it has them), warmed up; `options` is its autocannon load. */
async function startTarget(nodeArgs) {
  const target = await startProcess(server.script, server.args(api.line, key, token), { nodeArgs });
  if (server.get) {
    const auth = { authorization: `Bearer ${key}` };
    target.options = {
      url: `${target.line}/emails`,
      method: 'GET',
      headers: auth,
      connections: 32,
      rejectIsError: true,
    };
  } else {
    const headers =
      serverName === 'gateway' ? sessionHeaders(runner, await gatewaySession(runner, target.line)) : mcpHeaders;
    target.options = { url: target.line, method: 'POST', headers, body, connections: 32, rejectIsError: true };
  }
  await runJson('clients/autocannon.mjs', { ...target.options, amount: Math.min(2000, calls) });
  return target;
}

let result;
let cpuPerCall;
if (server.stdio) {
  const env = { UPSTREAM_URL: api.line, UPSTREAM_API_KEY: key };
  const command = [process.execPath, '--cpu-prof', `--cpu-prof-dir=${dir}`, ...server.stdio];
  const half = Math.ceil(calls / 2);
  const run = await runJson('clients/stdio.mjs', { command, env, calls: half, window: 32 });
  result = { total: 2 * half, rps: run.pipelined };
  cpuPerCall = run.cpuUs;
  await new Promise((resolve) => setTimeout(resolve, 1000)); // the profile is written as it exits
  await api.stop();
} else {
  ({ result, cpuPerCall } = await overHttp());
}

async function overHttp() {
  if (countSyscalls) {
    // Its own process without the profiler, whose timer signals would be counted too.
    const plain = await startTarget([]);
    await syscallsPerCall(plain, 2000);
    await plain.stop();
  }
  const target = await startTarget(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const { options } = target;
  const cpuBefore = cpuMicros(target.pid);
  const result = await runJson('clients/autocannon.mjs', { ...options, amount: calls });
  const cpuPerCall = (cpuMicros(target.pid) - cpuBefore) / result.total;
  await target.stop();
  await api.stop();
  const failed = result.non2xx + result.errors + result.timeouts + result.mismatches;
  if (failed > 0) throw new Error(`${failed} of ${result.total} calls failed; the profile would be meaningless`);
  return { result, cpuPerCall };
}

const file = join(
  dir,
  readdirSync(dir).find((f) => f.endsWith('.cpuprofile')),
);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map(); // node id -> µs
for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
const idle = [...byId.values()].filter((n) => n.callFrame.functionName === '(idle)');
const idleUs = idle.reduce((sum, n) => sum + (self.get(n.id) ?? 0), 0);
const busyUs = [...self.values()].reduce((a, b) => a + b, 0) - idleUs;

/** Where a frame's code lives: our package and file, a dependency, Node itself, or V8. */
function area(frame) {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const dep = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dep) return dep[1];
  const own = /\/(apps|packages)\/([^/]+)\/dist\/(.+)$/.exec(url);
  if (own) return `${own[2]}/${own[3]}`;
  return url.split('/').slice(-2).join('/');
}
const label = (frame) =>
  `${frame.functionName || '(anonymous)'} ${area(frame)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;

const sum = (map, k, v) => map.set(k, (map.get(k) ?? 0) + v);
const byFunction = new Map();
const byArea = new Map();
for (const [id, us] of self) {
  const node = byId.get(id);
  if (node.callFrame.functionName === '(idle)') continue;
  sum(byFunction, label(node.callFrame), us);
  sum(byArea, area(node.callFrame), us);
}
// Inclusive time of our own functions (each counted once per stack, so recursion is not doubled).
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map();
for (const [id, us] of self) {
  const seen = new Set();
  for (let n = id; n !== undefined; n = parent.get(n)) {
    const frame = byId.get(n).callFrame;
    if (!/\/(apps|packages)\/[^/]+\/dist\//.test(frame.url)) continue;
    const name = label(frame);
    if (seen.has(name)) continue;
    seen.add(name);
    sum(inclusive, name, us);
  }
}

// The share of busy samples, and that share of the CPU per call measured from /proc (the profile
// also holds start-up and warm-up, so µs are the share applied to the measured calls).
const pct = (us) =>
  `${((us / busyUs) * 100).toFixed(1).padStart(5)}% ${String(Math.round((us / busyUs) * cpuPerCall)).padStart(4)} µs`;
const top = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
console.log(
  `${serverName}, ${payloadName}: ${result.total} calls, ${Math.round(result.rps)} calls/s, ` +
    `${Math.round(cpuPerCall)} µs own CPU per call (/proc); profile ${file}`,
);
console.log('\nTop functions by self time (share of busy samples, and of the CPU per call):');
for (const [name, us] of top(byFunction, 25)) console.log(`  ${pct(us)}  ${name}`);
console.log('\nBy where the code lives:');
for (const [name, us] of top(byArea, 20)) console.log(`  ${pct(us)}  ${name}`);
console.log('\nOur own functions, inclusive (with what they call):');
for (const [name, us] of top(inclusive, 25)) console.log(`  ${pct(us)}  ${name}`);

/** Counts the server's system calls (all threads) over `n` calls with `strace -c`; prints them per call. */
async function syscallsPerCall(target, n) {
  const out = join(dir, 'strace.txt');
  const strace = spawn('strace', ['-f', '-c', '-o', out, '-p', String(target.pid)], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 500)); // attached
  const run = await runJson('clients/autocannon.mjs', { ...target.options, amount: n });
  strace.kill('SIGINT');
  await once(strace, 'exit');
  const rows = readFileSync(out, 'utf8')
    .split('\n')
    .map((line) => /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/.exec(line))
    .filter((match) => match && match[2] !== 'total')
    .map(([, count, name]) => [name, Number(count) / run.total]);
  const total = rows.reduce((s, [, c]) => s + c, 0);
  console.log(
    `${serverName}, ${payloadName}: ${total.toFixed(1)} system calls per call (strace -c over ${run.total} calls)`,
  );
  for (const [name, c] of rows.sort((a, b) => b[1] - a[1]).filter(([, c]) => c >= 0.05)) {
    console.log(`  ${c.toFixed(2).padStart(6)}  ${name}`);
  }
}
