// 11. What tracing costs: the same servers with tracing off (OTEL_* unset: no SDK loaded, no
// span), on (every span exported over OTLP/HTTP to a sink in another process), and on with one
// trace in ten kept. Measured as each server's own CPU per call (from /proc, a fixed number of
// calls, 16 in flight), which a shared machine barely moves, with the throughput of the same
// calls beside it. The gateway: tools/call `office_days` in a session (a request span and an
// upstream attempt span per call). The toy API: GET /emails (a server span per request).

import { pairedRatio, ratioText } from '../lib/runner.mjs';
import { callBody, gatewaySession, sessionHeaders } from '../lib/shared-servers.mjs';
import { cpuPerCall, median } from '../lib/util.mjs';

export const ids = [11];

export async function run(runner) {
  const calls = runner.settings.quick ? 2000 : 6000;
  const sink = await runner.server('servers/otlp-sink.mjs', []);
  // Batches every 200 ms, as a busy service would set them, and a queue that drops nothing.
  const on = {
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.line,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_BSP_MAX_QUEUE_SIZE: '65536',
  };
  const variants = {
    off: {},
    on,
    sampled: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
    none: { ...on, OTEL_TRACES_SAMPLER: 'always_off' },
  };
  const apiUrl = runner.api.line;
  const auth = { authorization: `Bearer ${runner.key}` };
  const sides = {};
  for (const [name, env] of Object.entries(variants)) {
    const gateway = await runner.server('servers/gateway-http.mjs', [apiUrl, runner.key, runner.token], { env });
    const headers = sessionHeaders(runner, await gatewaySession(runner, gateway.line));
    sides[`gateway-${name}`] = {
      pid: gateway.pid,
      send: () => runner.http(gateway.line, { method: 'POST', headers, body: callBody }),
    };
    if (name === 'sampled' || name === 'none') continue;
    const api = name === 'off' ? runner.api : await runner.server('servers/toy-api.mjs', [runner.key], { env });
    sides[`api-${name}`] = { pid: api.pid, send: () => runner.http(`${api.line}/emails`, { headers: auth }) };
  }
  console.log(`11. tracing off, on, 1 in 10 sampled: own CPU per call, ${calls} calls a round`);
  // A round to warm up, then the measured ones, sides interleaved.
  for (const side of Object.values(sides)) await cpuPerCall(side.pid, 500, side.send);
  const s = await runner.interleave(
    Object.fromEntries(
      Object.entries(sides).map(([name, side]) => [name, () => cpuPerCall(side.pid, calls, side.send)]),
    ),
  );
  const { exports } = JSON.parse((await runner.http(`${sink.line}/count`)).text);
  if (exports === 0) throw new Error('the traced servers sent no span to the sink');
  const cpu = (name) => median(s[name].map((x) => x.cpuUs));
  const rps = (name) => median(s[name].map((x) => x.rps));
  // Issue 41's goals for the gateway: every span exported at most 1.3x, none kept at most 1.05x.
  for (const [what, off, traced, goal] of [
    ['gateway `tools/call`: tracing on (every span exported)', 'gateway-off', 'gateway-on', 1.3],
    ['gateway `tools/call`: 1 trace in 10 kept', 'gateway-off', 'gateway-sampled', 1.15],
    ['gateway `tools/call`: none kept', 'gateway-off', 'gateway-none', 1.05],
    ['toy API `GET /emails`: tracing on (every span exported)', 'api-off', 'api-on', 1.5],
  ]) {
    const paired = pairedRatio(s[traced], s[off], (x) => x.cpuUs);
    const { ratio } = paired;
    runner.row({
      id: 11,
      comparison: `${what}, own CPU per call vs tracing off`,
      ours: `${Math.round(cpu(traced))} µs (${Math.round(rps(traced))}/s)`,
      baseline: `${Math.round(cpu(off))} µs (${Math.round(rps(off))}/s)`,
      measure: ratioText(paired),
      goal: `<= ${goal}x`,
      met: ratio <= goal,
    });
  }
}
