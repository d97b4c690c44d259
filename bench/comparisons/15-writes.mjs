// 15. What the gateway's own dedupe costs a write: `create_note` (POST /notes, which takes no
// Idempotency-Key, so the gateway keeps the key itself: a lease, then the result) with a new
// `_meta["agentwire.dev/idempotencyKey"]` on every call, against the same call without a key, on
// one gateway (its store in memory), side by side. Measured as the gateway's own CPU per call
// (from /proc, a fixed number of calls, 16 in flight). Goal: at most 25% more: the keyed call
// takes a lease and keeps its result for 24 h (its memory, and the collector's work on it, are
// the price of answering a repeat without the upstream).

import { randomUUID } from 'node:crypto';
import { gatewaySession, sessionHeaders } from '../lib/shared-servers.mjs';
import { cpuPerCall, median } from '../lib/util.mjs';

export const ids = [15];

const noteBody = (key) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'create_note',
      arguments: { text: 'bench note' },
      ...(key ? { _meta: { 'agentwire.dev/idempotencyKey': key } } : {}),
    },
  });

export async function run(runner) {
  const calls = runner.settings.quick ? 1000 : 3000;
  // Every call stores a note: room for all of them (the API keeps 10,000 by default).
  const api = await runner.server('servers/toy-api.mjs', [runner.key], { env: { TOY_API_MAX_NOTES: '1000000' } });
  // Every keyed call holds a key for 24 h: room for all of them (10,000 a caller by default).
  const gateway = await runner.server('servers/gateway-http.mjs', [api.line, runner.key, runner.token], {
    env: { IDEMPOTENCY_MAX_KEYS_PER_CALLER: '1000000' },
  });
  const headers = sessionHeaders(runner, await gatewaySession(runner, gateway.line));
  const keyed = await runner.http(gateway.line, { method: 'POST', headers, body: noteBody(randomUUID()) });
  if (!keyed.text.includes('"by":"gateway"'))
    throw new Error(`a keyed write was not deduped: ${keyed.text.slice(0, 300)}`);
  const sides = {
    keyless: () => runner.http(gateway.line, { method: 'POST', headers, body: noteBody(undefined) }),
    keyed: () => runner.http(gateway.line, { method: 'POST', headers, body: noteBody(randomUUID()) }),
  };
  console.log(
    `15. a keyed write deduped by the gateway vs the same write without a key: own CPU per call, ${calls} calls a round`,
  );
  for (const send of Object.values(sides)) await cpuPerCall(gateway.pid, 300, send);
  const s = await runner.interleave(
    Object.fromEntries(Object.entries(sides).map(([name, send]) => [name, () => cpuPerCall(gateway.pid, calls, send)])),
  );
  const cpu = (name) => median(s[name].map((x) => x.cpuUs));
  const rps = (name) => median(s[name].map((x) => x.rps));
  const ratio = cpu('keyed') / cpu('keyless');
  runner.row({
    id: 15,
    comparison:
      '`tools/call` of a write the API does not dedupe (create_note), with an idempotency key the gateway keeps (lease, stored result, in memory), own CPU per call vs without a key',
    ours: `${Math.round(cpu('keyed'))} µs (${Math.round(rps('keyed'))}/s)`,
    baseline: `${Math.round(cpu('keyless'))} µs (${Math.round(rps('keyless'))}/s)`,
    measure: `${ratio.toFixed(2)}x`,
    goal: '<= 1.25x',
    met: ratio <= 1.25,
  });
}
