// Instructions per call: a server's user-space work per call counted, not timed. Each side runs
// under Valgrind's callgrind (one thread: `node --single-threaded`, so the compilers and the
// garbage collector count on it too), warms up with counting off, then counts the instructions
// of a fixed number of calls made one at a time over one connection (or --in-flight N at a time,
// over N connections). The work of the program
// itself (the table's "program" column: everything but compiling and the GC) repeats to within
// 1% from run to run, where CPU time per call moves 10% on this shared machine: a 1.05x goal can
// be read at all. The GC is shown apart because it comes in lumps (a full collection falls
// inside some windows and not others), compiling because it is the warm-up's tail. What counts leave out: the kernel (the socket system calls, the same on both
// sides), cache misses, and the other processes.
// Usage: node bench/instructions.mjs [--sides a,b,...] [--payload office_days|emails-2|emails-50]
//          [--calls 1000] [--warm 10000] [--in-flight 1] [--before REPO_DIR] [--keep DIR] [--cache-sim]
//          (--cache-sim: callgrind's cache and branch simulation too, a table of misses per call
//          and an estimate of cycles; slower to run)
//          (the GET sides ignore --payload; --keep saves each side's callgrind dump there, as
//          LABEL.callgrind, with V8's map of the code it compiled, LABEL.perf-map, for
//          `node bench/instructions-diff.mjs A B` to say which functions the work is in)
//   sides: passthrough, gateway, metrics-off, tracing-none, tracing-sampled, tracing-on
//          (tools/call over HTTP), stdio-floor and gateway-stdio (tools/call of office_days over
//          stdio: a line in, a line out), toy-api, toy-api-tracing-on, toy-api-tracing-none and
//          bare (GET /emails); the first side is the
//          one the others are compared with. With --before, each side runs from that build and
//          from this one.
//   (needs valgrind; run `pnpm build` first; about 40 s a side)
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Pool, request } from 'undici';
import { callBody, mcpHeaders } from './lib/shared-servers.mjs';
import { BENCH_DIR, startProcess } from './lib/util.mjs';

const { values } = parseArgs({
  options: {
    sides: {
      type: 'string',
      default:
        'passthrough,gateway,metrics-off,tracing-none,tracing-sampled,tracing-on,bare,toy-api,stdio-floor,gateway-stdio',
    },
    payload: { type: 'string', default: 'office_days' },
    calls: { type: 'string', default: '1000' },
    warm: { type: 'string', default: '10000' },
    before: { type: 'string' },
    keep: { type: 'string' },
    'in-flight': { type: 'string', default: '1' },
    'cache-sim': { type: 'boolean', default: false },
  },
});
const PAYLOADS = {
  office_days: callBody,
  'emails-2': JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'list_emails', arguments: { limit: 2 } },
  }),
  'emails-50': JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'list_emails', arguments: { limit: 50 } },
  }),
};
const body = PAYLOADS[values.payload];
if (!body) throw new Error(`--payload must be one of ${Object.keys(PAYLOADS).join(', ')}; got "${values.payload}"`);
const calls = Number(values.calls);
const warm = Number(values.warm);
const inFlight = Number(values['in-flight']);
for (const [name, n] of [
  ['--calls', calls],
  ['--warm', warm],
  ['--in-flight', inFlight],
]) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of calls, at least 1`);
}
if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed');

const key = 'k'.repeat(32);
const token = 't'.repeat(32);
const api = await startProcess('servers/toy-api.mjs', [key]);
const sink = await startProcess('servers/otlp-sink.mjs');
// Spans exported when a batch is full (512), not every 5 s: under callgrind a call takes 20 to 60
// times longer, so the clock's export would send many small batches that a server at speed sends
// as few full ones.
const traced = {
  OTEL_EXPORTER_OTLP_ENDPOINT: sink.line,
  OTEL_BSP_MAX_QUEUE_SIZE: '65536',
  OTEL_BSP_SCHEDULE_DELAY: '600000',
};
const upstreamEnv = { UPSTREAM_URL: api.line, UPSTREAM_API_KEY: key };
const gateway = (env) => ({ script: 'servers/gateway-http.mjs', args: [api.line, key, token], session: true, env });
// The bare route answers the toy API's own JSON, from a file.
const emailsFile = join(mkdtempSync(join(tmpdir(), 'agentwire-instructions-')), 'emails.json');
const emails = await request(`${api.line}/emails`, { headers: { authorization: `Bearer ${key}` } });
writeFileSync(emailsFile, await emails.body.text());
/** The calls a side takes to warm up: --warm, times its own factor. */
const warmOf = (side) => warm * (side.warmTimes ?? 1);
const SIDES = {
  passthrough: { script: 'servers/passthrough.mjs', args: [api.line, key] },
  gateway: gateway({}),
  'metrics-off': gateway({ METRICS: 'off' }),
  'tracing-none': gateway({ ...traced, OTEL_TRACES_SAMPLER: 'always_off' }),
  // Warmed three times as long: its sampled path runs on one call in ten, so it takes ten times the
  // calls to be compiled, and after 10,000 it was still compiling in the counted window (54 to
  // 66 k a call, and 1.154x to 1.210x the gateway; after 30,000, with exports by size, 0 to 1 k
  // and 1.14x to 1.16x).
  'tracing-sampled': {
    ...gateway({ ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }),
    warmTimes: 3,
  },
  'tracing-on': gateway(traced),
  // Over stdio the calls go down the server's stdin, one line each (office_days: the floor
  // answers nothing else).
  'stdio-floor': { script: 'servers/stdio-floor.mjs', args: [], stdio: true, env: upstreamEnv },
  'gateway-stdio': { script: '../apps/mcp-gateway/dist/main.js', args: ['--stdio'], stdio: true, env: upstreamEnv },
  'toy-api': { script: 'servers/toy-api.mjs', args: [key], get: '/emails' },
  bare: { script: 'servers/bare-json.mjs', args: [emailsFile], get: '/emails' },
  // The toy API traced (@fastify/otel, a server span a request): every span exported, and none kept.
  'toy-api-tracing-on': { script: 'servers/toy-api.mjs', args: [key], get: '/emails', env: traced },
  'toy-api-tracing-none': {
    script: 'servers/toy-api.mjs',
    args: [key],
    get: '/emails',
    env: { ...traced, OTEL_TRACES_SAMPLER: 'always_off' },
  },
};

/** The kind of work a function of the profile does: compiling (parser, bytecode, optimizers), the GC, or the rest. */
function kindOf(symbol) {
  if (
    /v8::internal::(compiler|maglev|turboshaft|interpreter)::|OptimizedCompilationJob|Maglev|Turbofan|v8::internal::(Parser|Scanner|Compiler)::/.test(
      symbol,
    )
  ) {
    return 'compiler';
  }
  if (/v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|MinorMarkCompact|heap::)|Marking|Evacuat/.test(symbol)) {
    return 'gc';
  }
  return 'rest';
}

/** Sums a callgrind dump by kind (callgrind_annotate lists every function's own count). */
function countsOf(file) {
  const out = spawnSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  }).stdout;
  const counts = { total: 0, compiler: 0, gc: 0, rest: 0, events: {} };
  // With --cache-sim: every event's program total (cache misses, branches), by the event's name.
  const names = /^Events shown:\s+(.*)$/m.exec(out)?.[1].trim().split(/\s+/) ?? [];
  // Each column is a count with its percentage, or a bare 0 or '.' for none.
  const totals =
    /^(.*)PROGRAM TOTALS/m
      .exec(out)?.[1]
      .replace(/\([^)]*\)/g, ' ')
      .match(/[\d,]+|\./g) ?? [];
  names.forEach((name, i) => {
    const total = totals[i] ?? '0';
    counts.events[name] = total === '.' ? 0 : Number(total.replaceAll(',', ''));
  });
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+) \([^)]*\)\s+(.*)$/.exec(line);
    if (!m) continue;
    const n = Number(m[1].replaceAll(',', ''));
    if (m[2].includes('PROGRAM TOTALS')) counts.total = n;
    else counts[kindOf(m[2])] += n;
  }
  return counts;
}

async function post(url, headers, payload) {
  const r = await request(url, { method: 'POST', headers, body: payload });
  return { status: r.statusCode, headers: r.headers, text: await r.body.text() };
}

/** An HTTP side: the URL from its first line, a session when it keeps them, one connection. */
async function httpCalls(label, side, child, exited) {
  const [url] = await Promise.race([once(createInterface({ input: child.stdout }), 'line'), exited]);
  const headers = { ...mcpHeaders, authorization: `Bearer ${token}` };
  if (side.session) {
    const init = await post(
      url,
      headers,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      }),
    );
    headers['mcp-session-id'] = init.headers['mcp-session-id'];
    headers['mcp-protocol-version'] = '2025-11-25';
    await post(url, headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  }
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: inFlight });
  const call = side.get
    ? { path: side.get, method: 'GET', headers: { authorization: `Bearer ${key}` } }
    : { path: target.pathname, method: 'POST', headers, body };
  const one = async () => {
    const r = await pool.request(call);
    const text = await r.body.text();
    if (r.statusCode !== 200 || text.includes('"isError":true')) {
      throw new Error(`${label}: ${r.statusCode} ${text.slice(0, 200)}`);
    }
  };
  // `inFlight` connections, each making its calls one after another: n calls in all.
  const run = async (n) => {
    let left = n;
    const worker = async () => {
      while (left > 0) {
        left--;
        await one();
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
  };
  run.close = () => pool.close();
  return run;
}

/** A stdio side: initialize, then each call a line down its stdin and its answer a line back. */
async function stdioCalls(label, child, exited) {
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let id = 0;
  const send = async (method, params) => {
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params })}\n`);
    for (;;) {
      const next = await Promise.race([lines.next(), exited]);
      if (next.done) throw new Error(`${label}: stdout closed`);
      const message = JSON.parse(next.value);
      if (message.id === id) return message;
    }
  };
  const init = await send('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1' },
  });
  if (init.error) throw new Error(`${label}: initialize failed: ${JSON.stringify(init.error)}`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const run = async (n) => {
    for (let i = 0; i < n; i++) {
      const answer = await send('tools/call', { name: 'office_days', arguments: { employee_id: 'e-05' } });
      if (answer.error || answer.result?.isError) {
        throw new Error(`${label}: ${JSON.stringify(answer).slice(0, 200)}`);
      }
    }
  };
  run.close = async () => undefined;
  return run;
}

/** One side: its server under callgrind, warmed up, then `calls` calls counted. */
async function measure(label, side, repo) {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-instructions-'));
  const benchDir = repo ? join(resolve(repo), 'bench') : BENCH_DIR;
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      ...(values['cache-sim'] ? ['--cache-sim=yes', '--branch-sim=yes'] : []),
      `--callgrind-out-file=${join(dir, 'callgrind.out')}`,
      process.execPath,
      '--single-threaded',
      // Work the clock starts, not the calls: V8 flushes the bytecode of functions idle for a
      // while (to compile it again when next called) and collects garbage when the process looks
      // idle. Under callgrind a call takes 20 to 60 times longer, and longer still on a busy
      // machine, so left on they add work in proportion to the wall time a run takes.
      '--no-flush-bytecode',
      '--no-memory-reducer',
      // With --keep: where V8 put each compiled function, to name the JIT code in the dump.
      ...(values.keep ? ['--perf-basic-prof'] : []),
      join(benchDir, side.script),
      ...side.args,
    ],
    {
      cwd: benchDir,
      env: { ...process.env, ...(side.env ?? {}) },
      stdio: [side.stdio ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  child.stderr.on('data', (c) => {
    log = (log + c).slice(-4000);
  });
  const exited = once(child, 'exit').then(() => {
    throw new Error(`${label}: the server exited\n${log}`);
  });
  const run = side.stdio ? await stdioCalls(label, child, exited) : await httpCalls(label, side, child, exited);
  const control = (flag) => spawnSync('callgrind_control', [flag, String(child.pid)], { encoding: 'utf8' });
  await run(warmOf(side));
  control('--instr=on');
  await run(calls);
  control('--dump');
  await run.close();
  child.kill('SIGKILL');
  await once(child, 'exit');
  const dump = readdirSync(dir).find((f) => /\.\d+$/.test(f));
  if (!dump) throw new Error(`${label}: callgrind wrote no dump`);
  const counts = countsOf(join(dir, dump));
  if (values.keep) {
    mkdirSync(values.keep, { recursive: true });
    const name = join(values.keep, label.replace(/[^\w-]+/g, '-'));
    copyFileSync(join(dir, dump), `${name}.callgrind`);
    const map = `/tmp/perf-${child.pid}.map`;
    copyFileSync(map, `${name}.perf-map`);
    rmSync(map, { force: true });
  }
  rmSync(dir, { recursive: true, force: true });
  const per = (n) => n / calls / 1000;
  const e = counts.events;
  const cache = values['cache-sim']
    ? {
        l1: (e.I1mr + e.D1mr + e.D1mw) / calls,
        i1: e.I1mr / calls,
        ll: (e.ILmr + e.DLmr + e.DLmw) / calls,
        branches: (e.Bcm + e.Bim) / calls,
      }
    : undefined;
  return {
    label,
    k: per(counts.total),
    compiler: per(counts.compiler),
    gc: per(counts.gc),
    rest: per(counts.rest),
    cache,
  };
}

const rows = [];
const sideNames = values.sides.split(',');
try {
  for (const name of sideNames) {
    const side = SIDES[name];
    if (!side) throw new Error(`unknown side "${name}"; sides: ${Object.keys(SIDES).join(', ')}`);
    if (side.stdio && inFlight > 1) {
      throw new Error(`side "${name}" takes its calls one at a time (stdio); --in-flight applies to the HTTP sides`);
    }
    const builds = values.before ? [['before', values.before], ['after']] : [[undefined]];
    for (const [build, repo] of builds) {
      const label = build ? `${name} (${build})` : name;
      process.stderr.write(`${label}: ${warmOf(side)} calls to warm up, ${calls} counted...\n`);
      rows.push(await measure(label, side, repo));
    }
  }
} finally {
  await api.stop();
  await sink.stop();
  rmSync(dirname(emailsFile), { recursive: true, force: true });
}

const first = rows[0];
const k = (n) => `${n.toFixed(0)} k`;
const longer = sideNames
  .filter((name) => SIDES[name]?.warmTimes)
  .map((name) => `; ${name} after ${warmOf(SIDES[name])}`)
  .join('');
console.log(
  `\nInstructions per call, ${values.payload}, ${calls} calls counted after ${warm} to warm up${longer} (callgrind)`,
);
console.log('| side | program | GC | compilers | in all | program vs the first side |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.label} | ${k(r.rest)} | ${k(r.gc)} | ${k(r.compiler)} | ${k(r.k)} | ${(r.rest / first.rest).toFixed(3)}x |`,
  );
}

// A side that compiled much inside its counted window ran part of it as code not yet optimized
// (a late tier-up, or a deoptimization and the recompile after it), and its program count reads
// high with it (tracing-sampled, above; and once tracing-none at 30,000 calls of warm-up, 44 k and
// 1.101x, where a second run read both sides at 65 k and 1.045x).
const lumps = rows.filter((r) => r.compiler > 0.05 * r.rest);
if (lumps.length > 0) {
  console.log(
    `\nCompiled inside the counted window (more than 5% of the program's count): ${lumps.map((r) => `${r.label} ${k(r.compiler)}`).join(', ')}. Part of their window ran unoptimized code; read their ratios again in a second run, or with a longer --warm.`,
  );
}

// What the instructions cost beyond their number, as callgrind simulates it (--cache-sim: its
// own model of the caches, not this CPU's): first-level misses (instructions and data), last-level
// misses and mispredicted branches per call, and KCachegrind's cycle estimate, Ir + 10 x (L1
// misses + mispredicted branches) + 100 x LL misses. The whole program, the GC and compilers in it.
if (values['cache-sim']) {
  const estimate = (r) => r.k * 1000 + 10 * (r.cache.l1 + r.cache.branches) + 100 * r.cache.ll;
  console.log(
    '\n| side | L1 misses (of them instructions) | LL misses | branches mispredicted | estimated cycles | vs the first side |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const c = r.cache;
    const n = (x) => Math.round(x).toLocaleString('en-US');
    console.log(
      `| ${r.label} | ${n(c.l1)} (${n(c.i1)}) | ${n(c.ll)} | ${n(c.branches)} | ${k(estimate(r) / 1000)} | ${(estimate(r) / estimate(first)).toFixed(3)}x |`,
    );
  }
}

// Issue 41's goals, read on the program's instructions, for the pairs this run measured.
const GOALS = [
  ['gateway', 'passthrough', 1.3, 'the gateway vs the passthrough'],
  ['gateway', 'metrics-off', 1.05, 'metrics on vs off'],
  ['tracing-none', 'gateway', 1.05, 'tracing loaded, nothing sampled, vs tracing off'],
  ['tracing-on', 'gateway', 1.3, 'tracing, every span exported, vs off'],
  ['tracing-sampled', 'gateway', 1.15, 'tracing, 1 trace in 10 kept, vs off'],
  ['toy-api', 'bare', 1.3, 'the toy API vs bare Fastify, GET /emails'],
  ['toy-api-tracing-on', 'toy-api', 1.5, 'the toy API, tracing, every span exported, vs off'],
  ['toy-api-tracing-none', 'toy-api', 1.05, 'the toy API, tracing loaded, nothing sampled, vs off'],
  ['gateway-stdio', 'stdio-floor', 1.3, 'the gateway over stdio vs the stdio floor'],
];
const byLabel = new Map(rows.map((r) => [r.label, r]));
const goalRows = GOALS.filter(([a, b]) => byLabel.has(a) && byLabel.has(b));
if (goalRows.length > 0) {
  console.log('\n| goal | ratio | at most | met |');
  console.log('|---|---|---|---|');
  for (const [a, b, most, what] of goalRows) {
    const ratio = byLabel.get(a).rest / byLabel.get(b).rest;
    console.log(`| ${what} | ${ratio.toFixed(3)}x | ${most}x | ${ratio <= most ? 'yes' : '**no**'} |`);
  }
}
