// Own CPU per call, two builds of this repository side by side in one run (say, before and
// after a change): the http-client's CPU per GET (each build's client in a process of its own), and the
// gateway's CPU per tools/call read from /proc/<pid>/stat (Linux), the toy API's apart.
// Throughput on a shared machine swings by 2x between runs; CPU per call moves less, but not
// little: two copies of one build (an A/A run) read 0.88x to 1.17x with six rounds and 0.93x to
// 1.03x with twelve, the default, on this 2-core machine (BENCHMARKS.md). Each round measures the
// two builds back to back, in turns (before first in even rounds, after first in odd ones: the
// number of rounds is even, so each goes second as often, and the second of a round paid about
// 8% more), and a row's ratio is the median of the rounds' own ratios, with their range: what
// drifts between rounds cancels within one.
// Usage: node bench/own-cpu-ab.mjs BEFORE_REPO_DIR AFTER_REPO_DIR [--rounds 12]   (both built: pnpm build; about 6 minutes)
//   Run it A/A (a copy of one build against itself) to see the spread a change must beat.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { cpuMicros, median } from './lib/util.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '12' } },
});
const [beforeDir, afterDir] = positionals;
// Rounds measured, after one that warms up: even, so that neither build goes second more often.
const ROUNDS = Number(values.rounds);
const usage = 'usage: node bench/own-cpu-ab.mjs BEFORE_REPO_DIR AFTER_REPO_DIR [--rounds N]';
if (positionals.length !== 2) {
  console.error(`${usage}: two repository directories, each built (pnpm build); got ${positionals.length}`);
  process.exit(2);
}
if (!Number.isInteger(ROUNDS) || ROUNDS < 2 || ROUNDS % 2 !== 0) {
  console.error(`${usage}: --rounds must be an even whole number, at least 2; got "${values.rounds}"`);
  process.exit(2);
}
const builds = { before: beforeDir, after: afterDir };
const key = 'k'.repeat(32);
const token = 't'.repeat(32);
const dispatcher = new Agent({ connections: 32 });
const children = [];

function start(file, args) {
  const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve) =>
    createInterface({ input: child.stdout }).once('line', (line) => resolve({ child, url: line.trim() })),
  );
}
const cpuOf = cpuMicros;
async function post(url, headers, body) {
  const r = await request(url, { method: 'POST', headers, body: JSON.stringify(body), dispatcher });
  return { status: r.statusCode, headers: r.headers, text: await r.body.text() };
}
/**
 * Runs `measure(side)` for both builds in ROUNDS + 1 rounds (the first warms up and is not kept),
 * in turns; keeps each side's CPU per call and each round's after/before.
 */
async function interleaved(measure) {
  const s = { before: [], after: [], ratios: [] };
  for (let r = 0; r <= ROUNDS; r++) {
    const order = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    const round = {};
    for (const side of order) round[side] = await measure(side);
    if (r === 0) continue;
    s.before.push(round.before);
    s.after.push(round.after);
    s.ratios.push(round.after / round.before);
  }
  return s;
}
const row = (measure, s) => ({
  measure,
  before: median(s.before),
  after: median(s.after),
  ratio: median(s.ratios),
  low: Math.min(...s.ratios),
  high: Math.max(...s.ratios),
});

// 1. The client: GETs of a fixed document from a bare server, 16 in flight, each build's client
// in a process of its own (bench/servers/client-rounds.mjs says why).
const doc = join(tmpdir(), `agentwire-own-cpu-${process.pid}.json`);
writeFileSync(
  doc,
  JSON.stringify({ data: Array.from({ length: 20 }, (_, i) => ({ id: `m-${i}`, subject: 'x'.repeat(40) })) }),
);
const bare = await start(join(afterDir, 'bench/servers/bare-json.mjs'), [doc]);
const clients = {};
for (const [side, dir] of Object.entries(builds)) {
  const child = spawn(process.execPath, [join(afterDir, 'bench/servers/client-rounds.mjs'), dir, bare.url], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  await lines.next(); // "ready"
  clients[side] = async (calls = 6000) => {
    child.stdin.write(`${calls}\n`);
    const { value, done } = await lines.next();
    if (done) throw new Error(`the ${side} client's process ended`);
    return Number(value);
  };
}
const client = await interleaved((side) => clients[side]());

// 2. The gateway: tools/call in a 2025-11-25 session, 16 in flight, one toy API for both.
const api = await start(join(afterDir, 'bench/servers/toy-api.mjs'), [key]);
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${token}`,
};
const gateways = {};
for (const [side, dir] of Object.entries(builds)) {
  const g = await start(join(dir, 'bench/servers/gateway-http.mjs'), [api.url, key, token]);
  const init = await post(g.url, headers, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'own-cpu', version: '1' } },
  });
  gateways[side] = {
    ...g,
    headers: { ...headers, 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' },
  };
}
async function gatewayRound(g, name, args, calls = 4000) {
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
  const g0 = cpuOf(g.child.pid);
  const a0 = cpuOf(api.child.pid);
  let left = calls;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) {
        const r = await post(g.url, g.headers, body);
        if (r.status !== 200 || r.text.includes('"isError":true'))
          throw new Error(`${name}: ${r.status} ${r.text.slice(0, 200)}`);
      }
    }),
  );
  return { gateway: (cpuOf(g.child.pid) - g0) / calls, api: (cpuOf(api.child.pid) - a0) / calls };
}
const tools = [
  ['office_days', { employee_id: 'e-05' }],
  ['list_emails', { limit: 50 }],
];
const gateway = {};
for (const [name, args] of tools) {
  const apiSamples = [];
  gateway[name] = await interleaved(async (side) => {
    const us = await gatewayRound(gateways[side], name, args);
    apiSamples.push(us.api);
    return us.gateway;
  });
  gateway[name].api = apiSamples.slice(2); // not the warm-up round's two
}

// 3. The toy API's digest as an event stream (about 60 events, no pause), each build's own API,
// 16 streams at a time read to the end; and the gateway's streamed answer (a tools/call with a
// progressToken, which relays the digest's events as progress) against one API.
const digest = { date: '2026-06-10', max_items: 5 };
async function streamRound(url, streams = 1500) {
  const apiHeaders = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    authorization: `Bearer ${key}`,
  };
  let left = streams;
  const pid = url.pid;
  const c0 = cpuOf(pid);
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) {
        const r = await post(`${url.url}/digest?interval_ms=0`, apiHeaders, digest);
        if (r.status !== 200 || !r.text.includes('event: done'))
          throw new Error(`digest: ${r.status} ${r.text.slice(0, 200)}`);
      }
    }),
  );
  return (cpuOf(pid) - c0) / streams;
}
const apis = {};
for (const [side, dir] of Object.entries(builds)) {
  const a = await start(join(dir, 'bench/servers/toy-api.mjs'), [key]);
  apis[side] = { url: a.url, pid: a.child.pid };
}
// The toy API's GET /emails (a page of 20), each build's own API, 16 in flight.
async function emailsRound(api, calls = 6000) {
  const c0 = cpuOf(api.pid);
  let left = calls;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) {
        const r = await request(`${api.url}/emails`, { headers: { authorization: `Bearer ${key}` }, dispatcher });
        const text = await r.body.text();
        if (r.statusCode !== 200) throw new Error(`GET /emails: ${r.statusCode} ${text.slice(0, 200)}`);
      }
    }),
  );
  return (cpuOf(api.pid) - c0) / calls;
}
const emails = await interleaved((side) => emailsRound(apis[side]));
const stream = await interleaved((side) => streamRound(apis[side]));
const progressCall = (id) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'create_digest', arguments: { ...digest, interval_ms: 0 }, _meta: { progressToken: id } },
});
async function streamedAnswerRound(g, calls = 600) {
  const g0 = cpuOf(g.child.pid);
  let left = calls;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) {
        const r = await post(g.url, g.headers, progressCall(left));
        if (r.status !== 200 || !r.text.includes('notifications/progress') || r.text.includes('"isError":true'))
          throw new Error(`streamed answer: ${r.status} ${r.text.slice(0, 200)}`);
      }
    }),
  );
  return (cpuOf(g.child.pid) - g0) / calls;
}
const streamed = await interleaved((side) => streamedAnswerRound(gateways[side]));

const rows = [
  row('http-client CPU per GET (µs)', client),
  ...tools.map(([name]) =>
    row(
      `gateway CPU per tools/call ${name} (µs; toy API ${Math.round(median(gateway[name].api))} µs apart)`,
      gateway[name],
    ),
  ),
  row('toy API CPU per GET /emails (µs)', emails),
  row('toy API CPU per digest event stream (µs)', stream),
  row('gateway CPU per streamed tools/call create_digest with progress (µs)', streamed),
];
const fixed = (x) => x.toFixed(3);
console.log(
  `own CPU per call, medians of ${ROUNDS} interleaved rounds; after/before is the median of the rounds' own ratios (their range)`,
);
for (const r of rows) {
  console.log(
    `  ${r.measure}: before ${Math.round(r.before)}, after ${Math.round(r.after)}, after/before ${fixed(r.ratio)} (${fixed(r.low)}-${fixed(r.high)})`,
  );
}
for (const c of children) c.kill();
await dispatcher.close();
process.exit(0);
