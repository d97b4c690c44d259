// 9. What one hostile request costs a server, in its own CPU (read from /proc, Linux): the
// largest body each server takes, filled with unknown properties (every one a validation
// problem), and the worst patterns a spec can hold, run on the longest string the gateway's
// body limit lets through. Each is measured next to a valid small request to the same server,
// so the ratio shows what the hostile input adds; the answer's size is reported too.
import { writeFileSync } from 'node:fs';
import { median } from '../lib/runner.mjs';
import { gatewaySession, sessionHeaders } from '../lib/shared-servers.mjs';
import { cpuMicros, round } from '../lib/util.mjs';

export const ids = [9];

const GATEWAY_BODY_LIMIT = 1024 * 1024;
const API_BODY_LIMIT = 64 * 1024;
const CATASTROPHIC = '^(a+)+$';
// The costliest pattern the gateway still takes (patternCost just under 50,000): an alternation
// repeated 800 times, which RE2 compiles to the largest program a spec can ask for.
const COSTLIEST = `^(${'abcdefghijklmnopqrstuvwxyz'.split('').join('|')}){1,800}$`;

function spec() {
  const param = (pattern) => [{ name: 'q', in: 'query', required: true, schema: { type: 'string', pattern } }];
  const ok = { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
  return {
    openapi: '3.1.0',
    info: { title: 'Hostile patterns', version: '1' },
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths: {
      '/employees/e-05/office-days': { get: { operationId: 'office_days', responses: ok } },
      '/catastrophic': { get: { operationId: 'catastrophic', parameters: param(CATASTROPHIC), responses: ok } },
      '/costliest': { get: { operationId: 'costliest', parameters: param(COSTLIEST), responses: ok } },
    },
  };
}

/** A tools/call body of about `bytes` bytes. */
function call(name, args) {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
}
function unknownArguments(bytes) {
  const args = {};
  let size = 100;
  for (let i = 0; size < bytes - 40; i++) {
    args[`x${i}`] = i;
    size += `"x${i}":${i},`.length;
  }
  return args;
}

export async function run(runner) {
  console.log('9. one hostile request: server CPU');
  const file = runner.tmpFile('hostile-spec');
  writeFileSync(file, JSON.stringify(spec()));
  const gateway = await runner.server('servers/gateway-http.mjs', [runner.api.line, runner.key, runner.token, file]);
  const headers = sessionHeaders(runner, await gatewaySession(runner, gateway.line));
  const requests = runner.quick ? 3 : 10;

  /** CPU µs per request of `pid`, and the last answer's size; checks every answer. */
  const measure = (pid, send, check) => async () => {
    const before = cpuMicros(pid);
    let bytes = 0;
    for (let i = 0; i < requests; i++) {
      const r = await send();
      check(r);
      bytes = r.text.length;
    }
    return { cpuUs: (cpuMicros(pid) - before) / requests, bytes };
  };
  const toGateway = (body) => () => runner.http(gateway.line, { method: 'POST', headers, body });
  const rejected = (r) => {
    if (r.status !== 200 || !r.text.includes('"isError":true'))
      throw new Error(`expected a refusal: ${r.text.slice(0, 200)}`);
  };
  const fine = (r) => {
    if (r.status !== 200 || r.text.includes('"isError":true'))
      throw new Error(`expected success: ${r.text.slice(0, 200)}`);
  };
  const pad = GATEWAY_BODY_LIMIT - 200;
  const s = await runner.interleave({
    small: measure(gateway.pid, toGateway(call('office_days', {})), fine),
    unknown: measure(gateway.pid, toGateway(call('office_days', unknownArguments(pad))), rejected),
    catastrophic: measure(gateway.pid, toGateway(call('catastrophic', { q: `${'a'.repeat(pad)}!` })), rejected),
    costliest: measure(gateway.pid, toGateway(call('costliest', { q: `${'a'.repeat(pad)}!` })), rejected),
  });
  const apiHeaders = { authorization: `Bearer ${runner.key}`, 'content-type': 'application/json' };
  const digest = (body) => () =>
    runner.http(`${runner.api.line}/digest`, { method: 'POST', headers: apiHeaders, body: JSON.stringify(body) });
  const a = await runner.interleave({
    valid: measure(runner.api.pid, digest({ date: '2026-06-10' }), (r) => {
      if (r.status !== 200) throw new Error(`digest answered ${r.status}`);
    }),
    unknown: measure(runner.api.pid, digest({ date: '2026-06-10', ...unknownArguments(API_BODY_LIMIT - 100) }), (r) => {
      if (r.status !== 400) throw new Error(`expected 400, got ${r.status}: ${r.text.slice(0, 200)}`);
    }),
  });

  const ms = (samples) => median(samples.map((x) => x.cpuUs)) / 1000;
  const kb = (samples) => `${round(median(samples.map((x) => x.bytes)) / 1024, 1)} KiB`;
  const small = ms(s.small);
  for (const [side, comparison, goal] of [
    // JSON.parse alone of 71,000 properties takes tens of ms here: the goal is linear work, not zero.
    ['unknown', 'gateway: tools/call with 1 MiB (71,000) of unknown arguments (every one a problem)', 300],
    ['catastrophic', 'gateway: `^(a+)+$` from a spec against 1 MiB of `a` and a `!` (RE2)', 50],
    ['costliest', 'gateway: the costliest pattern a spec may hold, against 1 MiB', 2000],
  ]) {
    const cost = ms(s[side]);
    runner.row({
      id: 9,
      comparison,
      ours: `${round(cost, 1)} ms CPU, answer ${kb(s[side])}`,
      baseline: `${round(small, 2)} ms CPU for a valid small call`,
      measure: `${round(cost, 1)} ms`,
      goal: `<= ${goal} ms`,
      met: cost <= goal,
    });
  }
  const valid = ms(a.valid);
  const hostile = ms(a.unknown);
  runner.row({
    id: 9,
    comparison: 'toy API: POST /digest with 64 KiB of unknown properties (the read-only key is enough)',
    ours: `${round(hostile, 1)} ms CPU, answer ${kb(a.unknown)}`,
    baseline: `${round(valid, 2)} ms CPU for a valid digest`,
    measure: `${round(hostile, 1)} ms`,
    goal: '<= 50 ms',
    met: hostile <= 50,
  });
}
