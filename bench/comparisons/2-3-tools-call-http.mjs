// 2 and 3. tools/call over Streamable HTTP, every side in the same interleaved rounds, a fixed
// number of calls per sample: throughput, and each server's own CPU per call from /proc, with
// the toy API's CPU (the upstream every side calls) shown apart. 2: our gateway (session, JSON)
// against a Fastify + undici passthrough (the floor for one hop) on three payloads: the small
// `office_days`, a page of 2 emails and a page of 50. 3: against the official SDK's v2 handler
// and v1 stateless transport serving the same `office_days` tool.
import { checkClean, cpuOf, cpuRatio, cpuText, fmt, ratioText, round, rpsOf } from '../lib/runner.mjs';
import { gatewayWithSession, mcpHeaders, passthrough } from '../lib/shared-servers.mjs';

export const ids = [2, 3];

const PAYLOADS = {
  office_days: { name: 'office_days', arguments: { employee_id: 'e-05' }, check: 'mon' },
  'emails-2': { name: 'list_emails', arguments: { limit: 2 }, check: 'next_cursor' },
  'emails-50': { name: 'list_emails', arguments: { limit: 50 }, check: 'next_cursor' },
};
const bodyOf = (p) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: p.name, arguments: p.arguments } });

/** The v2 SDK's handler in its own revision: stateless, with the routing headers and _meta. */
function sdkV2Target(url) {
  return {
    url,
    headers: {
      ...mcpHeaders,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'office_days',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'office_days',
        arguments: { employee_id: 'e-05' },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  };
}

const describe = (samples, unit = 'calls/s') =>
  `${fmt(rpsOf(samples))} ${unit}, ${cpuText(samples, 'own')} CPU/call (API ${fmt(cpuOf(samples, 'api'))} µs)`;

export async function run(runner, want) {
  const { connections, calls } = runner.settings;
  const apiUrl = runner.api.line;
  const gateway = await gatewayWithSession(runner);
  const targets = {};
  for (const [payload, p] of Object.entries(PAYLOADS)) {
    if (payload !== 'office_days' && !want(2)) continue;
    targets[`gateway ${payload}`] = {
      url: gateway.url,
      headers: gateway.headers,
      body: bodyOf(p),
      pid: gateway.pid,
      check: p.check,
    };
  }
  if (want(2)) {
    const pass = await passthrough(runner);
    for (const [payload, p] of Object.entries(PAYLOADS)) {
      targets[`passthrough ${payload}`] = {
        url: pass.line,
        headers: mcpHeaders,
        body: bodyOf(p),
        pid: pass.pid,
        check: p.check,
      };
    }
  }
  if (want(3)) {
    const v2 = await runner.server('servers/sdk-v2-http.mjs', [apiUrl, runner.key]);
    targets['sdk-v2'] = { ...sdkV2Target(v2.line), pid: v2.pid, check: 'mon' };
    const v1 = await runner.server('servers/sdk-v1-http.mjs', [apiUrl, runner.key]);
    targets['sdk-v1'] = {
      url: v1.line,
      headers: { ...mcpHeaders, 'mcp-protocol-version': '2025-11-25' },
      body: bodyOf(PAYLOADS.office_days),
      pid: v1.pid,
      check: 'mon',
    };
  }
  // Every side must really answer the call before it is measured.
  for (const [name, t] of Object.entries(targets)) {
    const r = await runner.http(t.url, { method: 'POST', headers: t.headers, body: t.body });
    if (r.status !== 200 || !r.text.includes(t.check) || r.text.includes('"isError":true')) {
      throw new Error(`${name} did not answer tools/call properly: ${r.status} ${r.text.slice(0, 300)}`);
    }
  }
  console.log(`2/3. tools/call over Streamable HTTP: ${Object.keys(targets).join(', ')}`);
  const s = await runner.interleave(
    Object.fromEntries(
      Object.entries(targets).map(([name, t]) => [
        name,
        () =>
          runner.autocannon(
            {
              url: t.url,
              method: 'POST',
              headers: t.headers,
              body: t.body,
              connections,
              amount: calls,
              rejectIsError: true,
            },
            { own: t.pid, api: runner.api.pid },
          ),
      ]),
    ),
  );
  for (const [name, samples] of Object.entries(s)) checkClean(name, samples);
  if (want(2)) {
    for (const payload of Object.keys(PAYLOADS)) {
      const g = s[`gateway ${payload}`];
      const p = s[`passthrough ${payload}`];
      const ratio = rpsOf(g) / rpsOf(p);
      const what = payload === 'office_days' ? '`office_days`' : `a page of ${payload.slice(7)} emails`;
      runner.row({
        id: 2,
        comparison: `gateway \`tools/call\` (HTTP, JSON, session) vs Fastify + undici passthrough, ${what}: throughput`,
        ours: `${fmt(rpsOf(g))} calls/s`,
        baseline: `${fmt(rpsOf(p))} calls/s`,
        measure: `${round(ratio)}x`,
        goal: '>= 0.6x',
        met: ratio >= 0.6,
      });
      const cpu = cpuRatio(g, p, 'own');
      runner.row({
        id: 2,
        comparison: `gateway vs passthrough, ${what}: own CPU per call (toy API's apart)`,
        ours: describe(g),
        baseline: describe(p),
        measure: ratioText(cpu),
        goal: '<= 1.3x',
        met: cpu.ratio <= 1.3,
      });
    }
  }
  if (want(3)) {
    const g = s['gateway office_days'];
    // The same goal for the passthrough (no MCP work at all): how low any server's ratio could go.
    const p = s['passthrough office_days'];
    if (p) {
      runner.row({
        id: 3,
        comparison:
          'Fastify + undici passthrough vs official SDK v2 `createMcpHandler`, `office_days`: own CPU per call (the lowest ratio any server could reach)',
        ours: describe(p),
        baseline: describe(s['sdk-v2']),
        measure: ratioText(cpuRatio(p, s['sdk-v2'], 'own')),
        goal: 'bound',
        met: null,
      });
    }
    for (const sdk of ['sdk-v2', 'sdk-v1']) {
      const label = sdk === 'sdk-v2' ? 'official SDK v2 `createMcpHandler`' : 'official SDK v1 stateless transport';
      const ratio = rpsOf(g) / rpsOf(s[sdk]);
      runner.row({
        id: 3,
        comparison: `gateway \`tools/call\` vs ${label}: throughput`,
        ours: `${fmt(rpsOf(g))} calls/s`,
        baseline: `${fmt(rpsOf(s[sdk]))} calls/s`,
        measure: `${round(ratio)}x`,
        goal: '>= 4x',
        met: ratio >= 4,
      });
      const cpu = cpuRatio(g, s[sdk], 'own');
      runner.row({
        id: 3,
        comparison: `gateway vs ${label}, \`office_days\`: own CPU per call`,
        ours: describe(g),
        baseline: describe(s[sdk]),
        measure: ratioText(cpu),
        goal: '<= 0.15x',
        met: cpu.ratio <= 0.15,
      });
    }
  }
}
