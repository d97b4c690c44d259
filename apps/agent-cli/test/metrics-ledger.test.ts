// The gateway's /metrics after a real triage run through it (with the demo faults), checked
// against the run's ledger: the upstream attempts the gateway counts are the ledger's gateway
// lines, and its tool calls the ledger's tool calls.
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway, serveHttp } from '@agentwire/mcp-gateway';
import { buildApp } from '@agentwire/toy-api';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_FAULTS } from '../src/faults.js';
import { runAgent } from './support/run-agent.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

/** The sum of every series of a metric family. */
function total(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('gateway /metrics against the ledger of a triage run', () => {
  it('counts the upstream attempts and the tool calls the ledger records', async () => {
    const key = 'metrics-ledger-key-0123456789';
    const token = 'metrics-ledger-token-0123456789';
    const api = await buildApp({ apiKey: key, logger: false, admin: true });
    await api.listen({ host: '127.0.0.1', port: 0 });
    closers.push(() => api.close());
    const apiUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    const gateway = await createGateway({ upstreamUrl: apiUrl, upstreamApiKey: key });
    const http = await serveHttp(gateway, { host: '127.0.0.1', port: 0, token, allowedOrigins: [] });
    closers.push(async () => {
      await http.close();
      await gateway.close();
    });
    const faults = await fetch(`${apiUrl}/admin/faults`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(DEMO_FAULTS),
    });
    expect(faults.status).toBe(200);

    const ledger = join(mkdtempSync(join(tmpdir(), 'metrics-ledger-')), 'run.jsonl');
    const run = await runAgent(
      ['triage', '--via', 'mcp-http', '--api-url', apiUrl, '--mcp-url', `${http.url}/mcp`, '--ledger', ledger],
      { TOY_API_KEY: key, MCP_GATEWAY_TOKEN: token },
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(ledger, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; layer: string });
    const gatewayAttempts = lines.filter((l) => l.kind === 'attempt' && l.layer === 'gateway').length;
    const toolCalls = lines.filter((l) => l.kind === 'tool_call').length;

    const text = await (await fetch(`${http.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(gatewayAttempts).toBeGreaterThan(toolCalls); // the demo faults made the gateway retry
    expect(total(text, 'mcp_gateway_upstream_attempts_total')).toBe(gatewayAttempts);
    expect(total(text, 'mcp_gateway_tool_calls_total')).toBe(toolCalls);
    expect(total(text, 'mcp_gateway_upstream_retries_total')).toBe(gatewayAttempts - toolCalls);
  });
});
