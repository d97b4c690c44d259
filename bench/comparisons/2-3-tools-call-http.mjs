// 2 and 3. tools/call over Streamable HTTP, every side in the same interleaved rounds: our
// gateway (session, JSON) against a Fastify + undici passthrough (2: the floor for one hop) and
// against the official SDK's v2 handler and v1 stateless transport serving the same tool (3).
import { checkClean, fmt, round, rpsOf } from '../lib/runner.mjs';
import { callBody, gatewayWithSession, mcpHeaders, passthrough } from '../lib/shared-servers.mjs';

export const ids = [2, 3];

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

export async function run(runner, want) {
  const { connections, seconds } = runner.settings;
  const apiUrl = runner.api.line;
  const gateway = await gatewayWithSession(runner);
  const targets = { gateway: { url: gateway.url, headers: gateway.headers } };
  if (want(2)) targets.passthrough = { url: (await passthrough(runner)).line, headers: mcpHeaders };
  if (want(3)) {
    targets['sdk-v2'] = sdkV2Target((await runner.server('servers/sdk-v2-http.mjs', [apiUrl, runner.key])).line);
    targets['sdk-v1'] = {
      url: (await runner.server('servers/sdk-v1-http.mjs', [apiUrl, runner.key])).line,
      headers: { ...mcpHeaders, 'mcp-protocol-version': '2025-11-25' },
    };
  }
  // Every side must really answer the call before it is measured.
  for (const [name, t] of Object.entries(targets)) {
    const r = await runner.http(t.url, { method: 'POST', headers: t.headers, body: t.body ?? callBody });
    if (r.status !== 200 || !r.text.includes('mon') || r.text.includes('"isError":true')) {
      throw new Error(`${name} did not answer tools/call properly: ${r.status} ${r.text.slice(0, 300)}`);
    }
  }
  console.log(`2/3. tools/call over Streamable HTTP: ${Object.keys(targets).join(', ')}`);
  const s = await runner.interleave(
    Object.fromEntries(
      Object.entries(targets).map(([name, t]) => [
        name,
        () =>
          runner.autocannon({
            url: t.url,
            method: 'POST',
            headers: t.headers,
            body: t.body ?? callBody,
            connections,
            duration: seconds,
            rejectIsError: true,
          }),
      ]),
    ),
  );
  for (const [name, samples] of Object.entries(s)) checkClean(name, samples);
  const g = rpsOf(s.gateway);
  if (want(2)) {
    const ratio = g / rpsOf(s.passthrough);
    runner.row({
      id: 2,
      comparison: 'gateway `tools/call` (HTTP, JSON, session) vs Fastify + undici passthrough',
      ours: `${fmt(g)} calls/s`,
      baseline: `${fmt(rpsOf(s.passthrough))} calls/s`,
      measure: `${round(ratio)}x`,
      goal: '>= 0.6x',
      met: ratio >= 0.6,
    });
  }
  if (want(3)) {
    for (const sdk of ['sdk-v2', 'sdk-v1']) {
      const ratio = g / rpsOf(s[sdk]);
      const label = sdk === 'sdk-v2' ? 'official SDK v2 `createMcpHandler`' : 'official SDK v1 stateless transport';
      runner.row({
        id: 3,
        comparison: `gateway \`tools/call\` vs ${label}`,
        ours: `${fmt(g)} calls/s`,
        baseline: `${fmt(rpsOf(s[sdk]))} calls/s`,
        measure: `${round(ratio)}x`,
        goal: '>= 4x',
        met: ratio >= 4,
      });
    }
  }
}
