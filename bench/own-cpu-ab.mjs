// Own CPU per call, two builds of this repository side by side in one run (say, before and
// after a change): the http-client's CPU per GET (in this process, each build in turn), and the
// gateway's CPU per tools/call read from /proc/<pid>/stat (Linux), the toy API's apart.
// Throughput on a shared machine swings by 2x between runs; CPU per call barely moves.
// Usage: node bench/own-cpu-ab.mjs BEFORE_REPO_DIR AFTER_REPO_DIR   (both built: pnpm build)
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { cpuMicros, median } from './lib/util.mjs';

const [beforeDir, afterDir] = process.argv.slice(2);
if (!beforeDir || !afterDir) {
  console.error('usage: node bench/own-cpu-ab.mjs BEFORE_REPO_DIR AFTER_REPO_DIR');
  process.exit(2);
}
const builds = { before: beforeDir, after: afterDir };
const ROUNDS = 5;
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
// The second side of a round paid about 8% more CPU per call, whichever build it was (measured by
// swapping the two): the order alternates from round to round.
const inTurn = (r) => (r % 2 === 0 ? Object.keys(builds) : Object.keys(builds).reverse());
const ratio = (s) => Math.round((median(s.after) / median(s.before)) * 1000) / 1000;
const sides = (s) => ({ before: median(s.before), after: median(s.after), ratio: ratio(s) });

// 1. The client: GETs of a fixed document from a bare server, 16 in flight.
const doc = join(tmpdir(), `agentwire-own-cpu-${process.pid}.json`);
writeFileSync(
  doc,
  JSON.stringify({ data: Array.from({ length: 20 }, (_, i) => ({ id: `m-${i}`, subject: 'x'.repeat(40) })) }),
);
const bare = await start(join(afterDir, 'bench/servers/bare-json.mjs'), [doc]);
const clients = {};
for (const [side, dir] of Object.entries(builds)) {
  clients[side] = (await import(pathToFileURL(join(dir, 'packages/http-client/dist/index.js')).href)).HttpClient;
}
async function clientRound(HttpClient, calls = 6000) {
  const client = new HttpClient({ baseUrl: bare.url });
  await Promise.all(Array.from({ length: 16 }, () => client.get('/emails')));
  const before = process.cpuUsage();
  let left = calls;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) await client.get('/emails');
    }),
  );
  const used = process.cpuUsage(before);
  await client.close();
  return (used.user + used.system) / calls;
}
const client = { before: [], after: [] };
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const side of inTurn(r)) {
    const us = await clientRound(clients[side]);
    if (r > 0) client[side].push(us); // the first round warms up
  }
}

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
  const s = { before: [], after: [], api: [] };
  for (let r = 0; r < ROUNDS + 1; r++) {
    for (const side of inTurn(r)) {
      const { gateway: us, api: apiUs } = await gatewayRound(gateways[side], name, args);
      if (r > 0) {
        s[side].push(us);
        s.api.push(apiUs);
      }
    }
  }
  gateway[name] = s;
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
const emails = { before: [], after: [] };
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const side of inTurn(r)) {
    const us = await emailsRound(apis[side]);
    if (r > 0) emails[side].push(us);
  }
}
const stream = { before: [], after: [] };
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const side of inTurn(r)) {
    const us = await streamRound(apis[side]);
    if (r > 0) stream[side].push(us);
  }
}
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
const streamed = { before: [], after: [] };
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const side of inTurn(r)) {
    const us = await streamedAnswerRound(gateways[side]);
    if (r > 0) streamed[side].push(us);
  }
}

const rows = [
  {
    measure: 'http-client CPU per GET (µs)',
    before: median(client.before),
    after: median(client.after),
    ratio: ratio(client),
  },
  ...tools.map(([name]) => ({
    measure: `gateway CPU per tools/call ${name} (µs; toy API ${Math.round(median(gateway[name].api))} µs apart)`,
    before: median(gateway[name].before),
    after: median(gateway[name].after),
    ratio: ratio(gateway[name]),
  })),
  { measure: 'toy API CPU per GET /emails (µs)', ...sides(emails) },
  { measure: 'toy API CPU per digest event stream (µs)', ...sides(stream) },
  { measure: 'gateway CPU per streamed tools/call create_digest with progress (µs)', ...sides(streamed) },
];
console.log(`own CPU per call, medians of ${ROUNDS} interleaved rounds`);
for (const r of rows)
  console.log(`  ${r.measure}: before ${Math.round(r.before)}, after ${Math.round(r.after)}, after/before ${r.ratio}`);
for (const c of children) c.kill();
await dispatcher.close();
process.exit(0);
