// 200 concurrent sessions, 50 mixed tool calls each, over Streamable HTTP: no protocol errors,
// and afterwards no sessions, sockets or timers left behind and the heap back where it was.
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { heapMb } from '../../../test-support/heap.js';
import type { MemorySessionStore } from '../src/sessions/memory-session-store.js';
import { startHttpGateway, startToyApi } from './support/stack.js';

const SESSIONS = 200;
const CALLS = 50;

/** Open handles of a kind in this process (sockets, timers), as Node counts them. */
function resources(kind: string): number {
  return process.getActiveResourcesInfo().filter((r) => r === kind).length;
}

const MIX = [
  { name: 'office_days', arguments: { employee_id: 'e-05' } },
  { name: 'get_employee', arguments: { employee_id: 'e-07' } },
  { name: 'list_employees', arguments: { limit: 5 } },
  { name: 'list_emails', arguments: { urgent: true, date: '2026-06-10', limit: 5 } },
  { name: 'get_email', arguments: { email_id: 'm-0115' } },
  { name: 'create_digest', arguments: { date: '2026-06-10', max_items: 3 } },
];

describe('load over Streamable HTTP', () => {
  it(`serves ${SESSIONS} concurrent sessions making ${CALLS} mixed calls each, and leaves nothing behind`, async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const store = gw.store as MemorySessionStore;
    const pool = new Pool(gw.url, { connections: 64 });
    // Both servers answer before the baseline is taken (a condition, not a fixed sleep). The
    // gateway is asked through the pool, whose connections are closed with it below.
    const gatewayHealth = await pool.request({ path: '/health', method: 'GET' });
    expect(gatewayHealth.statusCode).toBe(200);
    await gatewayHealth.body.text();
    const apiHealth = await fetch(`${api.url}/health`);
    expect(apiHealth.status).toBe(200);
    await apiHealth.arrayBuffer();
    const baseline = { sockets: resources('TCPSocketWrap'), timers: resources('Timeout'), heap: heapMb() };
    const headers = {
      authorization: `Bearer ${gw.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const problems: string[] = [];
    let calls = 0;

    async function session(n: number) {
      const init = await pool.request({
        path: '/mcp',
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: `load-${n}`, version: '1' } },
        }),
      });
      await init.body.text();
      const id = String(init.headers['mcp-session-id']);
      const inSession = { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
      const note = await pool.request({
        path: '/mcp',
        method: 'POST',
        headers: inSession,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      await note.body.text();
      for (let i = 0; i < CALLS; i++) {
        const params = MIX[(n + i) % MIX.length];
        const r = await pool.request({
          path: '/mcp',
          method: 'POST',
          headers: inSession,
          body: JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params }),
        });
        const text = await r.body.text();
        calls++;
        const message = JSON.parse(text) as { id?: unknown; result?: { isError?: boolean }; error?: unknown };
        if (r.statusCode !== 200 || message.id !== i + 1 || !message.result || message.result.isError) {
          problems.push(`session ${n} call ${i} (${params?.name}): ${r.statusCode} ${text.slice(0, 200)}`);
        }
      }
      const closed = await pool.request({ path: '/mcp', method: 'DELETE', headers: inSession });
      await closed.body.text();
      if (closed.statusCode !== 204) problems.push(`session ${n}: DELETE answered ${closed.statusCode}`);
    }

    await Promise.all(Array.from({ length: SESSIONS }, (_, n) => session(n)));
    expect(problems.slice(0, 5)).toEqual([]);
    expect(calls).toBe(SESSIONS * CALLS);
    expect(store.size).toBe(0);
    await pool.close();
    // The clients' connections close a moment after the pool does. What stays open is the
    // gateway's keep-alive pool to the upstream (both ends, in this process), bounded by its
    // connection limit and closed by its idle timeout; timers of finished calls are cleared.
    for (let i = 0; i < 50 && (await gw.openConnections()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await gw.openConnections()).toBe(0);
    expect(resources('TCPSocketWrap') - baseline.sockets).toBeLessThanOrEqual(2 * 128);
    expect(resources('Timeout')).toBeLessThanOrEqual(baseline.timers);
    expect(heapMb() - baseline.heap).toBeLessThan(16);
  }, 180_000);
});
