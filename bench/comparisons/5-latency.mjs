// 5. What the gateway adds to one call at concurrency 1: the API direct, through the gateway,
// and through the passthrough (what the extra hop alone costs: the floor for any gateway).
import { median, round } from '../lib/runner.mjs';
import { gatewayWithSession, passthrough } from '../lib/shared-servers.mjs';

export const ids = [5];

export async function run(runner) {
  console.log('5. added latency at concurrency 1');
  const gateway = await gatewayWithSession(runner);
  const passthroughUrl = (await passthrough(runner)).line;
  const latency = (input) => () =>
    runner.runJson('clients/latency.mjs', { calls: runner.settings.latencyCalls, ...input });
  const s = await runner.interleave({
    api: latency({ mode: 'api', url: runner.api.line, key: runner.key }),
    gateway: latency({ mode: 'gateway', url: gateway.url, token: runner.token, sessionId: gateway.sessionId }),
    passthrough: latency({ mode: 'gateway', url: passthroughUrl, token: 'unused', sessionId: 'unused' }),
  });
  const a = median(s.api.map((x) => x.p50));
  const g = median(s.gateway.map((x) => x.p50));
  const p = median(s.passthrough.map((x) => x.p50));
  runner.row({
    id: 5,
    comparison: 'added latency of the gateway at concurrency 1 (median)',
    ours: `${round(g, 3)} ms`,
    baseline: `${round(a, 3)} ms direct; the passthrough adds ${round(p - a, 3)} ms`,
    measure: `+${round(g - a, 3)} ms`,
    goal: '<= +0.5 ms',
    met: g - a <= 0.5,
  });
}
