// 1. The toy API's GET /emails against a bare Fastify route returning the same JSON: what auth,
// validation, the envelope and the fault hooks cost. A fixed number of requests per sample;
// throughput, and each server's own CPU per request from /proc.
import { checkClean, cpuRatio, cpuText, fmt, ratioText, round, rpsOf } from '../lib/runner.mjs';
import { bareEmails } from '../lib/shared-servers.mjs';

export const ids = [1];

export async function run(runner) {
  const bare = await bareEmails(runner);
  const { connections, calls } = runner.settings;
  const apiUrl = runner.api.line;
  console.log('1. toy API GET /emails vs bare Fastify');
  const s = await runner.interleave({
    api: () =>
      runner.autocannon(
        { url: `${apiUrl}/emails`, headers: { authorization: `Bearer ${runner.key}` }, connections, amount: calls },
        { own: runner.api.pid },
      ),
    bare: () => runner.autocannon({ url: `${bare.line}/emails`, connections, amount: calls }, { own: bare.pid }),
  });
  checkClean('toy API', s.api);
  checkClean('bare', s.bare);
  const ratio = rpsOf(s.api) / rpsOf(s.bare);
  runner.row({
    id: 1,
    comparison: 'toy API `GET /emails` vs bare Fastify route, same JSON',
    ours: `${fmt(rpsOf(s.api))} req/s`,
    baseline: `${fmt(rpsOf(s.bare))} req/s`,
    measure: `${round(ratio)}x`,
    goal: '>= 0.7x',
    met: ratio >= 0.7,
  });
  const cpu = cpuRatio(s.api, s.bare, 'own');
  runner.row({
    id: 1,
    comparison: 'toy API `GET /emails` vs bare Fastify route: own CPU per request',
    ours: cpuText(s.api, 'own'),
    baseline: cpuText(s.bare, 'own'),
    measure: ratioText(cpu),
    goal: '<= 1.3x',
    met: cpu.ratio <= 1.3,
  });
}
