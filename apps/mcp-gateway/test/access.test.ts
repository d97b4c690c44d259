// Access to the gateway: the token on every route but /health, no CORS, and session ids that
// cannot be guessed from one another.
import { describe, expect, it } from 'vitest';
import { startHttpGateway, startToyApi } from './support/stack.js';

describe('access to the gateway', () => {
  it('answers 401 with a challenge on every route but /health when the token is missing or wrong', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    const routes: Array<[string, string]> = [
      ['POST', '/mcp'],
      ['GET', '/mcp'],
      ['DELETE', '/mcp'],
      ['PUT', '/mcp'],
      ['GET', '/'],
      ['GET', '/admin'],
      ['POST', '/mcp/../mcp'],
    ];
    for (const [method, path] of routes) {
      for (const authorization of [
        undefined,
        `Bearer ${gw.token}x`,
        `Basic ${Buffer.from(`u:${gw.token}`).toString('base64')}`,
      ]) {
        const response = await fetch(`${gw.url}${path}`, {
          method,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(authorization ? { authorization } : {}),
          },
          ...(method === 'POST' || method === 'PUT' ? { body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' } : {}),
        });
        expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
        expect(response.headers.get('www-authenticate')).toBe('Bearer realm="mcp-gateway"');
      }
    }
  });

  it('sends no CORS headers, and refuses a page from another site outright', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const preflight = (origin: string) =>
      fetch(gw.mcpUrl, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
    const evil = await preflight('https://evil.example');
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    const local = await preflight('http://localhost:5173');
    expect(local.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('issues session ids that are distinct and carry at least 128 random bits', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const r = await fetch(gw.mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${gw.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ids', version: '1' } },
        }),
      });
      await r.text();
      ids.push(r.headers.get('mcp-session-id') ?? '');
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[\x21-\x7e]{22,}$/);
    // No shared prefix or counter: the ids differ from their first characters on.
    expect(new Set(ids.map((id) => id.slice(0, 4))).size).toBeGreaterThan(150);
  });
});
