#!/usr/bin/env node
// Measures the scaled stack (docker-compose.scale.yml) for docs/SCALING.md, before any fault:
//   - own CPU per tool call of each gateway replica and of each toy-API replica (cgroup CPU
//     time over a fixed number of calls), and from it tool calls per second per core;
//   - Redis commands and network bytes per tool call (INFO commandstats and INFO stats);
//   - memory per session: a gateway replica's RSS and Redis's used_memory, before and after
//     opening sessions.
// scripts/chaos.sh runs it with the same environment as scripts/chaos.mjs; figures go to
// stdout and, as JSON, to SCALE_REPORT.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

/** The settings scripts/chaos.sh passes (see the header). */
const { env } = process;
const run = promisify(execFile);
const MCP = env.CHAOS_MCP_URL;
const TOKEN = env.MCP_GATEWAY_TOKEN;
const COMPOSE = env.CHAOS_COMPOSE;
const REDIS_PASSWORD = env.REDIS_PASSWORD;
const CALLS = Number(env.SCALE_CALLS ?? 3000);
const SESSIONS = Number(env.SCALE_SESSIONS ?? 300);
const CONCURRENCY = 16;
const IDLE_MS = 10_000;

const sh = async (command) => (await run('bash', ['-c', command], { timeout: 60_000 })).stdout.trim();
const idOf = (service) => sh(`${COMPOSE} ps -q ${service}`);

/** CPU time the container has used, in µs (cgroup v1 or v2). */
async function cpuMicros(id) {
  const out = await sh(
    `docker exec ${id} sh -c 'cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2>/dev/null && echo ns || awk "/usage_usec/{print \\$2}" /sys/fs/cgroup/cpu.stat'`,
  );
  const [value, unit] = out.split('\n');
  return unit === 'ns' ? Number(value) / 1000 : Number(value);
}

async function rssBytes(id) {
  const line = await sh(`docker exec ${id} grep VmRSS /proc/1/status`);
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024;
}

async function redis(...args) {
  const id = await idOf('redis');
  return sh(`docker exec -e REDISCLI_AUTH=${REDIS_PASSWORD} ${id} redis-cli ${args.join(' ')}`);
}

function infoField(text, name) {
  return Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/** Total calls across every Redis command, from INFO commandstats. */
function commandCalls(text) {
  let total = 0;
  const byCommand = {};
  for (const m of text.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) {
    byCommand[m[1]] = Number(m[2]);
    total += Number(m[2]);
  }
  return { total, byCommand };
}

async function post(body, headers = {}) {
  const response = await fetch(MCP, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { response, text };
}

async function openSession(name) {
  for (let tries = 1; ; tries++) {
    try {
      return await openSessionOnce(name);
    } catch (error) {
      if (tries >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * tries));
    }
  }
}

async function openSessionOnce(name) {
  const { response } = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version: '1' } },
  });
  const headers = {
    'mcp-session-id': response.headers.get('mcp-session-id') ?? '',
    'mcp-protocol-version': '2025-11-25',
  };
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return headers;
}

const statelessHeaders = {
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'office_days',
};
const statelessCall = (i) => ({
  jsonrpc: '2.0',
  id: i,
  method: 'tools/call',
  params: {
    name: 'office_days',
    arguments: { employee_id: `e-${String((i % 12) + 1).padStart(2, '0')}` },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

/** Runs `count` calls, CONCURRENCY at a time; returns wall seconds and failures. */
async function drive(count, call) {
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        // A call that fails (a connection reset through the balancer, say) is counted, not fatal:
        // these are measurements, and the failures are reported with them.
        try {
          const { response, text } = await call(i);
          if (response.status !== 200 || text.includes('"isError":true')) failed++;
        } catch {
          failed++;
        }
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, failed };
}

async function measureCalls(label, call) {
  const gateways = await Promise.all(['gateway-1', 'gateway-2', 'gateway-3'].map(idOf));
  const apis = await Promise.all(['toy-api-1', 'toy-api-2'].map(idOf));
  const redisId = await idOf('redis');
  await drive(200, call); // warm up: JIT, connection pools
  // What the containers spend with no calls at all (health checks: HAProxy's every second,
  // Docker's HEALTHCHECK, a Node process, every 5 s), taken off below per second of the run.
  const idleFrom = await Promise.all([...gateways, ...apis, redisId].map(cpuMicros));
  const idleStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const idleTo = await Promise.all([...gateways, ...apis, redisId].map(cpuMicros));
  const idlePerSecond = idleTo.map((to, i) => (to - (idleFrom[i] ?? 0)) / ((performance.now() - idleStart) / 1000));
  await redis('CONFIG', 'RESETSTAT');
  const cpuBefore = await Promise.all([...gateways, ...apis, redisId].map(cpuMicros));
  const netBefore = await redis('INFO', 'stats');
  const { seconds, failed } = await drive(CALLS, call);
  const cpuAfter = await Promise.all([...gateways, ...apis, redisId].map(cpuMicros));
  const stats = await redis('INFO', 'stats');
  const commands = commandCalls(await redis('INFO', 'commandstats'));
  const used = cpuAfter.map((after, i) => Math.max(0, after - (cpuBefore[i] ?? 0) - (idlePerSecond[i] ?? 0) * seconds));
  const gatewayMicros = used.slice(0, 3).reduce((a, b) => a + b, 0) / CALLS;
  const apiMicros = used.slice(3, 5).reduce((a, b) => a + b, 0) / CALLS;
  const redisMicros = (used[5] ?? 0) / CALLS;
  const bytes =
    infoField(stats, 'total_net_input_bytes') +
    infoField(stats, 'total_net_output_bytes') -
    (infoField(netBefore, 'total_net_input_bytes') + infoField(netBefore, 'total_net_output_bytes'));
  return {
    label,
    calls: CALLS,
    failed,
    callsPerSecond: Math.round(CALLS / seconds),
    gatewayCpuMicrosPerCall: Math.round(gatewayMicros),
    gatewayCallsPerSecondPerCore: Math.round(1e6 / gatewayMicros),
    toyApiCpuMicrosPerCall: Math.round(apiMicros),
    redisCpuMicrosPerCall: Math.round(redisMicros),
    redisCommandsPerCall: Number((commands.total / CALLS).toFixed(2)),
    redisCommands: Object.fromEntries(
      Object.entries(commands.byCommand)
        .filter(([, n]) => n / CALLS >= 0.05)
        .map(([name, n]) => [name, Number((n / CALLS).toFixed(2))]),
    ),
    redisBytesPerCall: Math.round(bytes / CALLS),
  };
}

async function measureSessions() {
  const gateways = await Promise.all(['gateway-1', 'gateway-2', 'gateway-3'].map(idOf));
  const rssBefore = await Promise.all(gateways.map(rssBytes));
  const memBefore = infoField(await redis('INFO', 'memory'), 'used_memory');
  for (let i = 0; i < SESSIONS; i += CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, SESSIONS - i) }, (_, k) => openSession(`m${i + k}`)));
  }
  const rssAfter = await Promise.all(gateways.map(rssBytes));
  const memAfter = infoField(await redis('INFO', 'memory'), 'used_memory');
  const rssGrowth = rssAfter.reduce((a, b) => a + b, 0) - rssBefore.reduce((a, b) => a + b, 0);
  return {
    sessions: SESSIONS,
    redisBytesPerSession: Math.round((memAfter - memBefore) / SESSIONS),
    gatewayRssBytesPerSession: Math.round(rssGrowth / SESSIONS),
    gatewayRssMegabytesBefore: rssBefore.map((b) => Math.round(b / 1048576)),
    gatewayRssMegabytesAfter: rssAfter.map((b) => Math.round(b / 1048576)),
  };
}

async function main() {
  const session = await openSession('measure');
  const sessionCalls = await measureCalls('2025-11-25 session', (i) =>
    post(
      {
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'office_days', arguments: { employee_id: `e-${String((i % 12) + 1).padStart(2, '0')}` } },
      },
      session,
    ),
  );
  const statelessCalls = await measureCalls('2026-07-28 stateless', (i) => post(statelessCall(i), statelessHeaders));
  const sessions = await measureSessions();
  const report = { calls: [sessionCalls, statelessCalls], sessions };
  console.log('\nscaled stack, measured before any fault (16 concurrent callers through HAProxy, office_days):\n');
  for (const c of report.calls) {
    console.log(
      `${c.label}: ${c.callsPerSecond} calls/s over ${c.calls} (${c.failed} failed); gateway CPU ${c.gatewayCpuMicrosPerCall} µs/call ` +
        `(${c.gatewayCallsPerSecondPerCore} calls/s per core), toy API ${c.toyApiCpuMicrosPerCall} µs/call, Redis ${c.redisCpuMicrosPerCall} µs/call; ` +
        `Redis ${c.redisCommandsPerCall} commands and ${c.redisBytesPerCall} bytes per call ${JSON.stringify(c.redisCommands)}`,
    );
  }
  console.log(
    `sessions: ${sessions.sessions} opened; Redis ${sessions.redisBytesPerSession} bytes per session; gateway RSS ${sessions.gatewayRssBytesPerSession} bytes per session (all replicas; MB before ${sessions.gatewayRssMegabytesBefore.join('/')}, after ${sessions.gatewayRssMegabytesAfter.join('/')})`,
  );
  if (env.SCALE_REPORT) writeFileSync(env.SCALE_REPORT, `${JSON.stringify(report, null, 2)}\n`);
}

main().catch((error) => {
  console.error(`scale-measure: ${error.stack ?? error}`);
  process.exit(1);
});
