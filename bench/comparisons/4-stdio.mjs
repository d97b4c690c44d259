// 4. Tool calls over stdio: our gateway against the official SDKs' stdio servers with the same
// tool, one call at a time and with a window of calls in flight.
import { GATEWAY_BIN } from '@agentwire/mcp-gateway';
import { fmt, median, round } from '../lib/runner.mjs';

export const ids = [4];

export async function run(runner) {
  console.log('4. tool calls over stdio');
  const { connections, stdioCalls } = runner.settings;
  const env = { UPSTREAM_URL: runner.api.line, UPSTREAM_API_KEY: runner.key };
  const side = (command) => () =>
    runner.runJson('clients/stdio.mjs', { command, env, calls: stdioCalls, window: connections });
  const s = await runner.interleave({
    gateway: side([process.execPath, GATEWAY_BIN, '--stdio']),
    'sdk-v2': side([process.execPath, runner.script('servers/sdk-v2-stdio.mjs')]),
    'sdk-v1': side([process.execPath, runner.script('servers/sdk-v1-stdio.mjs')]),
  });
  // Own CPU per call of each server process, over both phases (from /proc, in the client).
  const cpu = (name) => median(s[name].map((x) => x.cpuUs));
  for (const sdk of ['sdk-v2', 'sdk-v1']) {
    const ratio = cpu('gateway') / cpu(sdk);
    runner.row({
      id: 4,
      comparison: `gateway over stdio vs official SDK ${sdk.slice(4)} stdio server: own CPU per call`,
      ours: `${fmt(cpu('gateway'))} µs`,
      baseline: `${fmt(cpu(sdk))} µs`,
      measure: `${round(ratio)}x`,
      goal: '<= 0.5x',
      met: ratio <= 0.5,
    });
  }
  for (const mode of ['sequential', 'pipelined']) {
    const g = median(s.gateway.map((x) => x[mode]));
    for (const sdk of ['sdk-v2', 'sdk-v1']) {
      const b = median(s[sdk].map((x) => x[mode]));
      runner.row({
        id: 4,
        comparison: `gateway over stdio vs official SDK ${sdk.slice(4)} stdio server, ${mode === 'sequential' ? 'one at a time' : `${connections} in flight`}`,
        ours: `${fmt(g)} calls/s`,
        baseline: `${fmt(b)} calls/s`,
        measure: `${round(g / b)}x`,
        goal: '>= 2x',
        met: g / b >= 2,
      });
    }
  }
}
