// The gateway restarts under the agent: with a session (the legacy revisions) the next call
// gets 404 for the session, and the agent initializes a new one by itself and goes on; with the
// stateless 2026-07-28 revision there is no session to lose.
import type { AddressInfo } from 'node:net';
import { HttpClient, Ledger } from '@agentwire/http-client';
import { createGateway, serveHttp } from '@agentwire/mcp-gateway';
import { buildApp } from '@agentwire/toy-api';
import { afterEach, describe, expect, it } from 'vitest';
import { McpBackend, type ToolCallRecord } from '../src/triage/mcp-backend.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function stack() {
  const key = 'agent-test-key-0123456789';
  const token = 'agent-test-token-0123456789';
  const api = await buildApp({ apiKey: key, logger: false });
  await api.listen({ host: '127.0.0.1', port: 0 });
  closers.push(() => api.close());
  const upstreamUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  let current: { close(): Promise<void> } | undefined;
  const start = async (port: number) => {
    const gateway = await createGateway({ upstreamUrl, upstreamApiKey: key });
    const http = await serveHttp(gateway, { host: '127.0.0.1', port, token, allowedOrigins: [] });
    current = {
      close: async () => {
        await http.close();
        await gateway.close();
      },
    };
    return http.url;
  };
  const url = await start(0);
  closers.push(() => current?.close() ?? Promise.resolve());
  return {
    mcpUrl: `${url}/mcp`,
    token,
    /** Stops the gateway and starts a new one on the same port: every session is gone. */
    restart: async () => {
      await current?.close();
      await start(Number(new URL(url).port));
    },
  };
}

describe('the agent when the gateway restarts', () => {
  for (const mode of ['legacy', 'auto'] as const) {
    it(`goes on by itself (${mode === 'legacy' ? 'a session: 404, then a new one' : 'stateless: nothing to lose'})`, async () => {
      const s = await stack();
      const ledger = new Ledger();
      const http = new HttpClient({ baseUrl: s.mcpUrl, ledger });
      closers.push(() => http.close());
      const calls: ToolCallRecord[] = [];
      const backend = await McpBackend.http({
        url: s.mcpUrl,
        token: s.token,
        http,
        record: (r) => calls.push(r),
        mode,
      });
      closers.push(() => backend.close());
      expect((await backend.officeDays('e-05')).employee_id).toBe('e-05');
      await s.restart();
      expect((await backend.officeDays('e-07')).employee_id).toBe('e-07');
      expect(calls.map((c) => c.isError)).toEqual([false, false]);
      const statuses = ledger.attempts.map((e) => e.status);
      if (mode === 'legacy') {
        // The 404 is on the record, followed by a new initialize and the call again.
        expect(statuses).toContain(404);
        const after404 = ledger.attempts.slice(statuses.indexOf(404) + 1).map((e) => e.status);
        expect(after404.length).toBeGreaterThanOrEqual(2);
        expect(after404.every((status) => status !== null && status < 300)).toBe(true);
      } else {
        expect(statuses.every((status) => status !== null && status < 300)).toBe(true);
      }
    });
  }
});
