// 17. What the gateway adds at a fixed offered rate (open loop): the API direct, through the
// gateway, and through the passthrough, at 500 and 1,000 calls a second. Closed-loop load
// (autocannon, comparison 2) measures throughput; this measures the latency a caller sees
// while the servers are busy but not saturated, the tail included (agentgateway publishes its
// p99 this way).
import { median, round } from '../lib/runner.mjs';
import { gatewayWithSession, passthrough } from '../lib/shared-servers.mjs';

export const ids = [17];
const RATES = [500, 1000];

export async function run(runner) {
  console.log('17. added latency at a fixed offered rate (open loop)');
  const gateway = await gatewayWithSession(runner);
  const passthroughUrl = (await passthrough(runner)).line;
  const seconds = runner.quick ? 2 : 4;
  for (const rate of RATES) {
    const load = (input) => () =>
      runner.runJson('clients/open-loop.mjs', { rate, seconds, warmupSeconds: 1, ...input }).then((r) => {
        if (r.errors > 0) throw new Error(`open loop at ${rate}/s: ${r.errors} failed calls`);
        return r;
      });
    const s = await runner.interleave({
      api: load({ mode: 'api', url: runner.api.line, key: runner.key }),
      gateway: load({ mode: 'gateway', url: gateway.url, token: runner.token, sessionId: gateway.sessionId }),
      passthrough: load({ mode: 'gateway', url: passthroughUrl, token: 'unused', sessionId: 'unused' }),
    });
    const m = (side, q) => median(s[side].map((x) => x[q]));
    const added = (side, q) => m(side, q) - m('api', q);
    const ms = (n) => `${round(n, 3)} ms`;
    const signed = (n) => `${n < 0 ? '-' : '+'}${ms(Math.abs(n))}`;
    runner.row({
      id: 17,
      comparison: `added latency at ${rate} calls/s offered (open loop), p50 and p99: gateway vs the passthrough (API direct ${ms(m('api', 'p50'))} / ${ms(m('api', 'p99'))})`,
      ours: `${signed(added('gateway', 'p50'))} / ${signed(added('gateway', 'p99'))}`,
      baseline: `${signed(added('passthrough', 'p50'))} / ${signed(added('passthrough', 'p99'))}`,
      measure: `p99 ${signed(m('gateway', 'p99') - m('passthrough', 'p99'))} vs the passthrough`,
      goal: 'p99 <= passthrough + 0.3 ms',
      met: m('gateway', 'p99') - m('passthrough', 'p99') <= 0.3,
    });
  }
}
