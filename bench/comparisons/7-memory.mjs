// 7. Gateway memory: with 1,000 open sessions, and its growth between N and 2N calls (each
// reading taken after a full collection, which the gateway runs on SIGUSR2).
import { once } from 'node:events';
import { checkClean, fmt, round } from '../lib/runner.mjs';
import { callBody, gatewaySession, sessionHeaders } from '../lib/shared-servers.mjs';

export const ids = [7];

export async function run(runner) {
  console.log('7. gateway memory');
  const { connections, memoryCalls: n } = runner.settings;
  const gateway = await runner.server('servers/gateway-http.mjs', [runner.api.line, runner.key, runner.token], {
    nodeArgs: ['--expose-gc'],
  });
  const memory = async () => {
    const line = once(gateway.lines, 'line');
    gateway.child.kill('SIGUSR2');
    return JSON.parse((await line)[0]);
  };
  await new Promise((r) => setTimeout(r, 500));
  const idle = (await memory()).rssMb;
  const sessions = [];
  for (let batch = 0; batch < 50; batch++) {
    sessions.push(...(await Promise.all(Array.from({ length: 20 }, () => gatewaySession(runner, gateway.line)))));
  }
  const withSessions = (await memory()).rssMb;
  runner.row({
    id: 7,
    comparison: 'gateway RSS with 1,000 open sessions',
    ours: `${round(withSessions, 1)} MB`,
    baseline: `${round(idle, 1)} MB idle`,
    measure: `${round(withSessions, 1)} MB`,
    goal: '<= 150 MB',
    met: withSessions <= 150,
  });
  const load = () =>
    runner.autocannon({
      url: gateway.line,
      method: 'POST',
      headers: sessionHeaders(runner, sessions[0]),
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
  runner.row({
    id: 7,
    comparison: `gateway RSS growth between ${fmt(n)} and ${fmt(2 * n)} calls (after a full GC)`,
    ours: `${round(at2N.rssMb, 1)} MB (heap ${round(at2N.heapUsedMb, 1)})`,
    baseline: `${round(atN.rssMb, 1)} MB (heap ${round(atN.heapUsedMb, 1)})`,
    measure: `${round(growth * 100, 1)}%`,
    goal: '< 10%',
    met: growth < 0.1,
  });
}
