// 16. When an upstream is sick rather than dead (issue 40), through @agentwire/http-client
// against the toy API made sick by its fault rules (seeded):
//   - 5% of reads stalled for 2 s: the p99 of hedged reads (p95 of recent latencies) against the
//     healthy p99, and how many more requests the hedges sent;
//   - half of all calls failing with 503: while the breaker is open, how fast a call fails, and
//     how many requests reach the upstream per half-open interval;
//   - nothing wrong: the client's own CPU per GET with the breaker and the bulkhead on (as the
//     gateway runs them by default) against without.
import { fmt, median, round } from '../lib/runner.mjs';
import { bareEmails } from '../lib/shared-servers.mjs';

export const ids = [16];

const STALL = {
  method: 'GET',
  path: '/employees/{employee_id}',
  action: 'delay',
  delay_ms: 2000,
  probability: 0.05,
  times: 10_000,
};
const FAIL = {
  method: 'GET',
  path: '/employees/{employee_id}',
  action: 'status',
  status: 503,
  probability: 0.5,
  times: 10_000,
};

export async function run(runner) {
  const calls = runner.settings.quick ? 400 : 1000;
  const api = await runner.server('servers/toy-api.mjs', [runner.key], { env: { TOY_API_ADMIN: '1' } });
  const faults = async (rules) => {
    const r = await runner.http(`${api.line}/admin/faults`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${runner.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ seed: 16, rules }),
    });
    if (r.status !== 200) throw new Error(`setting faults failed: ${r.text}`);
  };
  const sick =
    (mode, rules, extra = {}) =>
    async () => {
      await faults(rules);
      return runner.runJson('clients/sick.mjs', {
        url: api.line,
        key: runner.key,
        mode,
        calls,
        concurrency: 4,
        ...extra,
      });
    };
  console.log(
    `16. a sick upstream: hedged reads, the breaker, and what both cost when nothing is wrong (${calls} calls a side)`,
  );
  const s = await runner.interleave({
    healthy: sick('plain', []),
    hedged: sick('hedge', [STALL]),
    // 4 callers, each a call every 5 ms: about 3 s a round, several 1 s breaks.
    broken: sick('breaker', [FAIL], { calls: calls * 2, pauseMs: 5 }),
  });
  await faults([]);
  const med = (side, field) => median(s[side].map((x) => x[field]));
  const p99Ratio = med('hedged', 'p99') / med('healthy', 'p99');
  const extra = med('hedged', 'hedgesSent') / calls;
  runner.row({
    id: 16,
    comparison:
      'reads with 5% stalled for 2 s, hedged after the p95 of recent latencies: p99 latency vs a healthy upstream (and the extra requests hedging sent)',
    ours: `p99 ${round(med('hedged', 'p99'))} ms (+${round(extra * 100)}% requests)`,
    baseline: `p99 ${round(med('healthy', 'p99'))} ms`,
    measure: `${round(p99Ratio)}x`,
    goal: '<= 2x, <= 10% more requests',
    met: p99Ratio <= 2 && extra <= 0.1,
  });
  const refusedP50 = med('broken', 'refusedP50');
  const probes = Math.max(...s.broken.map((x) => x.maxProbesPerInterval));
  runner.row({
    id: 16,
    comparison:
      'an upstream failing 50% of calls, breaker at Polly thresholds (1 s break): a call while open fails in (p50), and requests per half-open interval',
    ours: `${round(refusedP50 ?? Number.NaN, 3)} ms, ${probes} per interval (${med('broken', 'opens')} opens, ${med('broken', 'refused')} refused)`,
    baseline: `${round(med('broken', 'p50'))} ms a call that is sent`,
    measure: `${round(refusedP50 ?? Number.NaN, 3)} ms`,
    goal: '< 5 ms, <= 1 probe',
    met: refusedP50 !== null && refusedP50 < 5 && probes <= 1,
  });
  const bare = await bareEmails(runner);
  const { connections, seconds } = runner.settings;
  const loop = (kind) => () =>
    runner.runJson('clients/get-loop.mjs', { kind, url: `${bare.line}/emails`, seconds, concurrency: connections });
  const o = await runner.interleave({ plain: loop('http-client'), resilient: loop('http-client-resilient') });
  const cpu = (side) => median(o[side].map((x) => x.cpuUs));
  const ratio = cpu('resilient') / cpu('plain');
  runner.row({
    id: 16,
    comparison: 'http-client GET with the breaker and the bulkhead on, nothing wrong: own CPU per GET vs both off',
    ours: `${fmt(cpu('resilient'))} µs`,
    baseline: `${fmt(cpu('plain'))} µs`,
    measure: `${round(ratio)}x`,
    goal: '<= 1.05x',
    met: ratio <= 1.05,
  });
}
