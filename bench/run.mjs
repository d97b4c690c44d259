// `pnpm bench`: every comparison of issue 7, side by side in one run. Each server runs in its
// own process and the load comes from yet another (autocannon, or a small client script); the
// two sides of a comparison alternate round by round, and we report medians and ratios,
// because these machines are shared and noisy. Results go to bench/results/*.json and, for a
// full run, into the table in BENCHMARKS.md.
// Usage: pnpm bench [--quick] [--only 1,2,...] [--no-update]
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GATEWAY_BIN } from '@agentwire/mcp-gateway';
import { Agent, request } from 'undici';
import { BENCH_DIR, median, round, runJson, startProcess } from './lib/util.mjs';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-update': { type: 'boolean', default: false },
  },
});
const quick = values.quick;
const only = values.only ? new Set(values.only.split(',').map(Number)) : undefined;
const want = (n) => !only || only.has(n);
const settings = quick
  ? { rounds: 3, seconds: 2, connections: 32, latencyCalls: 500, stdioCalls: 1000, memoryCalls: 10_000, startupRuns: 5 }
  : {
      rounds: 5,
      seconds: 5,
      connections: 32,
      latencyCalls: 2000,
      stdioCalls: 3000,
      memoryCalls: 50_000,
      startupRuns: 9,
    };
const { rounds, seconds, connections } = settings;
const began = Date.now();

const script = (path) => join(BENCH_DIR, path);
const autocannon = (options) => runJson(script('clients/autocannon.mjs'), options);
const started = [];
async function server(path, args, options) {
  const p = await startProcess(script(path), args, options);
  started.push(p);
  return p;
}
const rows = [];
function row(id, comparison, ours, baseline, measure, goal, met, note = '') {
  rows.push({ id, comparison, ours, baseline, measure, goal, met, note });
  console.log(`  ${met ? 'met   ' : 'MISSED'} ${id}. ${comparison}: ${measure} (goal ${goal})`);
}
const fmt = (n) => Math.round(n).toLocaleString('en-US');

/** Alternates the sides round by round; returns each side's samples. */
async function interleave(sides) {
  const samples = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(sides)) samples[name].push(await run());
  }
  return samples;
}
const rpsOf = (samples) => median(samples.map((s) => s.rps));
function checkClean(name, samples) {
  const bad = samples.reduce(
    (n, s) => n + (s.non2xx ?? 0) + (s.errors ?? 0) + (s.timeouts ?? 0) + (s.mismatches ?? 0),
    0,
  );
  if (bad > 0) throw new Error(`${name}: ${bad} failed requests under load; the comparison would be meaningless`);
}

const key = randomBytes(16).toString('hex');
const token = randomBytes(16).toString('hex');
const api = await server('servers/toy-api.mjs', [key]);
const apiUrl = api.line;
const auth = { authorization: `Bearer ${key}` };
const dispatcher = new Agent({ connections: 64 });
async function http(url, init = {}) {
  const { statusCode, headers, body } = await request(url, { dispatcher, ...init });
  const text = await body.text();
  return { status: statusCode, headers, text };
}

try {
  console.log(
    `agentwire benchmarks${quick ? ' (quick)' : ''}: ${rounds} interleaved rounds, Node ${process.version}, ${availableParallelism()} cores`,
  );

  // 1. toy-api GET /emails vs a bare Fastify route returning the same JSON.
  if (want(1) || want(6)) {
    const emails = await http(`${apiUrl}/emails`, { headers: auth });
    if (emails.status !== 200) throw new Error(`GET /emails answered ${emails.status}`);
    const file = join(tmpdir(), `agentwire-bench-emails-${process.pid}.json`);
    writeFileSync(file, emails.text);
    const bare = await server('servers/bare-json.mjs', [file]);
    const same = await http(`${bare.line}/emails`);
    if (JSON.stringify(JSON.parse(same.text)) !== JSON.stringify(JSON.parse(emails.text)))
      throw new Error('the bare route does not return the same JSON');

    if (want(1)) {
      console.log('1. toy API GET /emails vs bare Fastify');
      const s = await interleave({
        api: () => autocannon({ url: `${apiUrl}/emails`, headers: auth, connections, duration: seconds }),
        bare: () => autocannon({ url: `${bare.line}/emails`, connections, duration: seconds }),
      });
      checkClean('toy API', s.api);
      checkClean('bare', s.bare);
      const ratio = rpsOf(s.api) / rpsOf(s.bare);
      row(
        1,
        'toy API `GET /emails` vs bare Fastify route, same JSON',
        `${fmt(rpsOf(s.api))} req/s`,
        `${fmt(rpsOf(s.bare))} req/s`,
        `${round(ratio)}x`,
        '>= 0.7x',
        ratio >= 0.7,
      );
    }

    // 6. http-client GET vs raw undici, against the bare route (the client is what is measured).
    if (want(6)) {
      console.log('6. http-client GET vs raw undici request');
      const loop = (kind) => () =>
        runJson(script('clients/get-loop.mjs'), {
          kind,
          url: `${bare.line}/emails`,
          seconds,
          concurrency: connections,
        });
      const s = await interleave({ client: loop('http-client'), undici: loop('undici') });
      const ratio = rpsOf(s.client) / rpsOf(s.undici);
      row(
        6,
        '`@agentwire/http-client` GET vs raw undici `request` (both parse JSON)',
        `${fmt(rpsOf(s.client))} req/s`,
        `${fmt(rpsOf(s.undici))} req/s`,
        `${round(ratio)}x`,
        '>= 0.85x',
        ratio >= 0.85,
      );
    }
  }

  // 2, 3, 5: gateway tools/call over Streamable HTTP.
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  async function gatewaySession(url) {
    const init = await http(url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      }),
    });
    const sessionId = init.headers['mcp-session-id'];
    if (init.status !== 200 || !sessionId)
      throw new Error(`initialize answered ${init.status}: ${init.text.slice(0, 200)}`);
    await http(url, {
      method: 'POST',
      headers: {
        ...mcpHeaders,
        authorization: `Bearer ${token}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    return sessionId;
  }
  const callBody = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'office_days', arguments: { employee_id: 'e-05' } },
  });
  if (want(2) || want(3) || want(5)) {
    const gateway = await server('servers/gateway-http.mjs', [apiUrl, key, token]);
    const sessionId = await gatewaySession(gateway.line);
    const targets = {
      gateway: {
        url: gateway.line,
        headers: {
          ...mcpHeaders,
          authorization: `Bearer ${token}`,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-11-25',
        },
      },
    };
    if (want(2))
      targets.passthrough = { url: (await server('servers/passthrough.mjs', [apiUrl, key])).line, headers: mcpHeaders };
    if (want(3)) {
      // The v2 SDK's handler in its own revision: stateless, with the routing headers and _meta.
      targets['sdk-v2'] = {
        url: (await server('servers/sdk-v2-http.mjs', [apiUrl, key])).line,
        headers: {
          ...mcpHeaders,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'office_days',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'office_days',
            arguments: { employee_id: 'e-05' },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      };
      targets['sdk-v1'] = {
        url: (await server('servers/sdk-v1-http.mjs', [apiUrl, key])).line,
        headers: { ...mcpHeaders, 'mcp-protocol-version': '2025-11-25' },
      };
    }
    // Every side must really answer the call before it is measured.
    for (const [name, t] of Object.entries(targets)) {
      const r = await http(t.url, { method: 'POST', headers: t.headers, body: t.body ?? callBody });
      if (r.status !== 200 || !r.text.includes('mon') || r.text.includes('"isError":true'))
        throw new Error(`${name} did not answer tools/call properly: ${r.status} ${r.text.slice(0, 300)}`);
    }
    if (want(2) || want(3)) {
      console.log(`2/3. tools/call over Streamable HTTP: ${Object.keys(targets).join(', ')}`);
      const s = await interleave(
        Object.fromEntries(
          Object.entries(targets).map(([name, t]) => [
            name,
            () =>
              autocannon({
                url: t.url,
                method: 'POST',
                headers: t.headers,
                body: t.body ?? callBody,
                connections,
                duration: seconds,
                rejectIsError: true,
              }),
          ]),
        ),
      );
      for (const [name, samples] of Object.entries(s)) checkClean(name, samples);
      const g = rpsOf(s.gateway);
      if (want(2)) {
        const ratio = g / rpsOf(s.passthrough);
        row(
          2,
          'gateway `tools/call` (HTTP, JSON, session) vs Fastify + undici passthrough',
          `${fmt(g)} calls/s`,
          `${fmt(rpsOf(s.passthrough))} calls/s`,
          `${round(ratio)}x`,
          '>= 0.6x',
          ratio >= 0.6,
        );
      }
      if (want(3)) {
        for (const sdk of ['sdk-v2', 'sdk-v1']) {
          const ratio = g / rpsOf(s[sdk]);
          const label = sdk === 'sdk-v2' ? 'official SDK v2 `createMcpHandler`' : 'official SDK v1 stateless transport';
          row(
            3,
            `gateway \`tools/call\` vs ${label}`,
            `${fmt(g)} calls/s`,
            `${fmt(rpsOf(s[sdk]))} calls/s`,
            `${round(ratio)}x`,
            '>= 4x',
            ratio >= 4,
          );
        }
      }
    }
    if (want(5)) {
      console.log('5. added latency at concurrency 1');
      const calls = settings.latencyCalls;
      // The passthrough shows what the extra hop alone costs: the floor for any gateway.
      const passthroughUrl = targets.passthrough?.url ?? (await server('servers/passthrough.mjs', [apiUrl, key])).line;
      const latency = (input) => () => runJson(script('clients/latency.mjs'), { calls, ...input });
      const s = await interleave({
        api: latency({ mode: 'api', url: apiUrl, key }),
        gateway: latency({ mode: 'gateway', url: gateway.line, token, sessionId }),
        passthrough: latency({ mode: 'gateway', url: passthroughUrl, token: 'unused', sessionId: 'unused' }),
      });
      const a = median(s.api.map((x) => x.p50));
      const g = median(s.gateway.map((x) => x.p50));
      const p = median(s.passthrough.map((x) => x.p50));
      row(
        5,
        'added latency of the gateway at concurrency 1 (median)',
        `${round(g, 3)} ms`,
        `${round(a, 3)} ms direct; the passthrough adds ${round(p - a, 3)} ms`,
        `+${round(g - a, 3)} ms`,
        '<= +0.5 ms',
        g - a <= 0.5,
      );
    }
  }

  // 4. stdio: our gateway vs the official SDKs' stdio servers with the same tool.
  if (want(4)) {
    console.log('4. tool calls over stdio');
    const env = { UPSTREAM_URL: apiUrl, UPSTREAM_API_KEY: key };
    const side = (command) => () =>
      runJson(script('clients/stdio.mjs'), { command, env, calls: settings.stdioCalls, window: connections });
    const s = await interleave({
      gateway: side([process.execPath, GATEWAY_BIN, '--stdio']),
      'sdk-v2': side([process.execPath, script('servers/sdk-v2-stdio.mjs')]),
      'sdk-v1': side([process.execPath, script('servers/sdk-v1-stdio.mjs')]),
    });
    for (const mode of ['sequential', 'pipelined']) {
      const g = median(s.gateway.map((x) => x[mode]));
      for (const sdk of ['sdk-v2', 'sdk-v1']) {
        const b = median(s[sdk].map((x) => x[mode]));
        row(
          4,
          `gateway over stdio vs official SDK ${sdk.slice(4)} stdio server, ${mode === 'sequential' ? 'one at a time' : `${connections} in flight`}`,
          `${fmt(g)} calls/s`,
          `${fmt(b)} calls/s`,
          `${round(g / b)}x`,
          '>= 2x',
          g / b >= 2,
        );
      }
    }
  }

  // 7. Memory: 1,000 open sessions, then growth between N and 2N calls.
  if (want(7)) {
    console.log('7. gateway memory');
    const gateway = await server('servers/gateway-http.mjs', [apiUrl, key, token], { nodeArgs: ['--expose-gc'] });
    // Memory after a full collection, as the process reports it on SIGUSR2.
    const memory = async () => {
      const line = once(gateway.lines, 'line');
      gateway.child.kill('SIGUSR2');
      return JSON.parse((await line)[0]);
    };
    await new Promise((r) => setTimeout(r, 500));
    const idle = (await memory()).rssMb;
    const sessions = [];
    for (let batch = 0; batch < 50; batch++) {
      sessions.push(...(await Promise.all(Array.from({ length: 20 }, () => gatewaySession(gateway.line)))));
    }
    const withSessions = (await memory()).rssMb;
    row(
      7,
      'gateway RSS with 1,000 open sessions',
      `${round(withSessions, 1)} MB`,
      `${round(idle, 1)} MB idle`,
      `${round(withSessions, 1)} MB`,
      '<= 150 MB',
      withSessions <= 150,
    );
    const n = settings.memoryCalls;
    const headers = {
      ...mcpHeaders,
      authorization: `Bearer ${token}`,
      'mcp-session-id': sessions[0],
      'mcp-protocol-version': '2025-11-25',
    };
    const load = () =>
      autocannon({
        url: gateway.line,
        method: 'POST',
        headers,
        body: callBody,
        connections,
        amount: n,
        rejectIsError: true,
      });
    checkClean('memory run', [await load()]);
    const atN = await memory();
    checkClean('memory run', [await load()]);
    const at2N = await memory();
    const growth = (at2N.rssMb - atN.rssMb) / atN.rssMb;
    row(
      7,
      `gateway RSS growth between ${fmt(n)} and ${fmt(2 * n)} calls (after a full GC)`,
      `${round(at2N.rssMb, 1)} MB (heap ${round(at2N.heapUsedMb, 1)})`,
      `${round(atN.rssMb, 1)} MB (heap ${round(atN.heapUsedMb, 1)})`,
      `${round(growth * 100, 1)}%`,
      '< 10%',
      growth < 0.1,
    );
  }

  // 8. Start-up: spawn to initialize answered over stdio.
  if (want(8)) {
    console.log('8. start-up over stdio');
    const big = { openapi: '3.1.0', info: { title: 'Big', version: '1' }, paths: {} };
    for (let i = 0; i < 500; i++) {
      big.paths[`/things${i}/{id}`] = {
        get: {
          operationId: `get_thing_${i}`,
          description: `Thing number ${i}.`,
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
    const bigFile = join(tmpdir(), `agentwire-bench-500-ops-${process.pid}.json`);
    writeFileSync(bigFile, JSON.stringify(big));
    const startup = (openapi) => () =>
      runJson(script('clients/startup.mjs'), {
        bin: GATEWAY_BIN,
        env: { UPSTREAM_URL: apiUrl, UPSTREAM_API_KEY: key, ...(openapi ? { OPENAPI_URL: openapi } : {}) },
      });
    const s = await interleave({ toy: startup(undefined), big: startup(bigFile) });
    // More runs than rounds: start-up is short and its spread is wide.
    for (let i = rounds; i < settings.startupRuns; i++) {
      s.toy.push(await startup(undefined)());
      s.big.push(await startup(bigFile)());
    }
    const node = median(s.toy.map((x) => x.nodeMs));
    const toy = median(s.toy.map((x) => x.ms));
    const bigMs = median(s.big.map((x) => x.ms));
    row(
      8,
      "start-up: stdio initialize answered, toy API's spec (fetched)",
      `${Math.round(toy)} ms`,
      `${Math.round(node)} ms for \`node -e 0\``,
      `${Math.round(toy)} ms`,
      '<= 300 ms',
      toy <= 300,
    );
    row(
      8,
      'start-up: stdio initialize answered, generated spec of 500 operations',
      `${Math.round(bigMs)} ms`,
      `${Math.round(node)} ms for \`node -e 0\``,
      `${Math.round(bigMs)} ms`,
      '<= 1000 ms',
      bigMs <= 1000,
    );
  }
} finally {
  for (const p of started.reverse()) await p.stop();
  await dispatcher.close();
}

const machine = {
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
};
const result = {
  date: new Date(began).toISOString(),
  command: `pnpm bench${quick ? ' --quick' : ''}${values.only ? ` --only ${values.only}` : ''}`,
  quick,
  settings,
  machine,
  durationS: round((Date.now() - began) / 1000, 1),
  rows,
};
mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
const resultFile = join(BENCH_DIR, 'results', quick ? 'quick.json' : 'latest.json');
writeFileSync(resultFile, `${JSON.stringify(result, null, 2)}\n`);
console.log(
  `\n${rows.filter((r) => r.met).length} of ${rows.length} goals met in ${result.durationS} s; results: ${resultFile}`,
);
console.table(
  rows.map((r) => ({
    '#': r.id,
    comparison: r.comparison,
    ours: r.ours,
    baseline: r.baseline,
    result: r.measure,
    goal: r.goal,
    met: r.met ? 'yes' : 'NO',
  })),
);

if (!quick && !values.only && !values['no-update']) {
  const file = join(BENCH_DIR, '..', 'BENCHMARKS.md');
  const text = readFileSync(file, 'utf8');
  const table = [
    `Run of ${result.date.slice(0, 10)}: \`${result.command}\` on ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, ${machine.platform}; ${rounds} interleaved rounds of ${seconds} s, ${connections} connections; ${result.durationS} s in all. Raw results: \`bench/results/latest.json\`.`,
    '',
    '| # | comparison | ours | baseline | result | goal | met |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.id} | ${r.comparison} | ${r.ours} | ${r.baseline} | ${r.measure} | ${r.goal} | ${r.met ? 'yes' : '**no**'} |`,
    ),
  ].join('\n');
  const updated = text.replace(
    /<!-- bench:start -->[\s\S]*<!-- bench:end -->/,
    `<!-- bench:start -->\n${table}\n<!-- bench:end -->`,
  );
  if (updated === text && !text.includes(table))
    throw new Error('BENCHMARKS.md has no <!-- bench:start --> ... <!-- bench:end --> block');
  writeFileSync(file, updated);
  console.log(`updated ${file}`);
}
process.exit(0);
