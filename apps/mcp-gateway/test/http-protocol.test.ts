import { describe, expect, it } from 'vitest';
import { createGateway, serveHttp } from '../src/gateway.js';
import { type HttpGateway, startHttpGateway, startToyApi } from './support/stack.js';

const ACCEPT = 'application/json, text/event-stream';

function post(gw: HttpGateway, body: unknown, headers: Record<string, string> = {}) {
  return fetch(gw.mcpUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.token}`, accept: ACCEPT, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const init = (version = '2025-06-18', id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function session(gw: HttpGateway, version = '2025-06-18') {
  const r = await post(gw, init(version));
  const id = r.headers.get('mcp-session-id') ?? '';
  await post(
    gw,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'mcp-session-id': id, 'mcp-protocol-version': version },
  );
  return { id, headers: { 'mcp-session-id': id, 'mcp-protocol-version': version } };
}

const modernMeta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const modernHeaders = (method: string, name?: string) => ({
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

describe('Streamable HTTP, initialize-based revisions', () => {
  it('negotiates the version and issues a session id of at least 128 random bits', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const r = await post(gw, init('2025-03-26'));
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.result.protocolVersion).toBe('2025-03-26');
    expect(body.result.capabilities).toEqual({ tools: { listChanged: true }, logging: {} });
    const id = r.headers.get('mcp-session-id') ?? '';
    expect(id).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    const unknown = await post(gw, init('1999-01-01'));
    expect((await unknown.json()).result.protocolVersion).toBe('2025-11-25');
  });

  it('answers 202 to notifications, and refuses requests without or with an unknown session', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const s = await session(gw);
    const note = await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, s.headers);
    expect(note.status).toBe(202);
    expect(await note.text()).toBe('');
    const missing = await post(gw, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.message).toMatch(/Mcp-Session-Id header is required/);
    const unknown = await post(
      gw,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-session-id': 'nope-nope-nope-nope-nope' },
    );
    expect(unknown.status).toBe(404);
  });

  it('ends a session on DELETE (204), after which it is 404', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const s = await session(gw);
    const del = await fetch(gw.mcpUrl, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${gw.token}`, ...s.headers },
    });
    expect(del.status).toBe(204);
    expect((await post(gw, { jsonrpc: '2.0', id: 3, method: 'ping' }, s.headers)).status).toBe(404);
  });

  it('checks MCP-Protocol-Version: unsupported 400, missing means the session still works', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const s = await session(gw, '2025-03-26');
    const bad = await post(
      gw,
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { ...s.headers, 'mcp-protocol-version': '2030-01-01' },
    );
    expect(bad.status).toBe(400);
    const none = await post(gw, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': s.id });
    expect(await none.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });

  it('answers 406 unless Accept lists JSON and SSE, 415 for another content type, 413 over the limit', async () => {
    const gw = await startHttpGateway(await startToyApi(), { bodyLimit: 2048 });
    expect((await post(gw, init(), { accept: 'application/json' })).status).toBe(406);
    expect((await post(gw, 'x', { 'content-type': 'text/plain' })).status).toBe(415);
    const big = await post(gw, { ...init(), padding: 'x'.repeat(5000) });
    expect(big.status).toBe(413);
    expect((await big.json()).error).toEqual({
      code: -32600,
      message:
        "Request body too large: the gateway takes at most 2048 bytes in one request, a batch's messages together (MAX_MESSAGE_BYTES)",
    });
  });

  it('answers malformed JSON with -32700 and a non-JSON-RPC object with -32600', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const parse = await post(gw, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(parse.status).toBe(400);
    expect((await parse.json()).error.code).toBe(-32700);
    const s = await session(gw);
    const invalid = await post(gw, { jsonrpc: '1.0', id: 5, method: 'ping' }, s.headers);
    expect((await invalid.json()).error.code).toBe(-32600);
  });

  it('answers a _meta that is not an object as a client mistake, never a 500', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const s = await session(gw);
    const r = await post(
      gw,
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'health', arguments: {}, _meta: null } },
      s.headers,
    );
    expect(r.status).toBe(200);
    expect((await r.json()).result.isError).toBe(false);
  });

  it('takes batches only in 2025-03-26', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const old = await session(gw, '2025-03-26');
    const batch = [
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
    ];
    const ok = await post(gw, batch, old.headers);
    const answers = await ok.json();
    expect(answers.map((a: { id: string }) => a.id).sort()).toEqual(['a', 'b']);
    const recent = await session(gw, '2025-06-18');
    const refused = await post(gw, batch, recent.headers);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toMatch(/batches are not part of revision 2025-06-18/);
  });

  it('refuses methods it does not have (-32601) and tool calls for unknown tools (-32602)', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const s = await session(gw);
    const method = await post(gw, { jsonrpc: '2.0', id: 1, method: 'resources/list' }, s.headers);
    expect((await method.json()).error.code).toBe(-32601);
    const tool = await post(
      gw,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'nope', arguments: {} } },
      s.headers,
    );
    expect((await tool.json()).error).toEqual({ code: -32602, message: 'Unknown tool: nope' });
  });

  it('streams log messages on the GET stream with event ids, and replays them after Last-Event-ID', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const s = await session(gw);
    await post(gw, { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } }, s.headers);
    for (let i = 0; i < 3; i++) {
      await post(
        gw,
        { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'health', arguments: {} } },
        s.headers,
      );
    }
    // Ids are <epoch>-<n>; `0-0` comes before any, so the whole kept stream is replayed.
    const read = async (lastEventId: string, until: (ids: string[]) => boolean) => {
      const replay = await fetch(gw.mcpUrl, {
        headers: {
          authorization: `Bearer ${gw.token}`,
          accept: 'text/event-stream',
          ...s.headers,
          'last-event-id': lastEventId,
        },
      });
      expect(replay.headers.get('content-type')).toContain('text/event-stream');
      const reader = (replay.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      const ids = () => [...text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1] as string);
      while (!until(ids())) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      return { text, ids: ids() };
    };
    const all = await read('0-0', (ids) => ids.length >= 3);
    const epoch = all.ids[0]?.split('-')[0];
    expect(all.ids.slice(0, 3)).toEqual([`${epoch}-1`, `${epoch}-2`, `${epoch}-3`]);
    const { text, ids } = await read(`${epoch}-1`, (seen) => seen.includes(`${epoch}-3`));
    expect(ids.slice(0, 2)).toEqual([`${epoch}-2`, `${epoch}-3`]);
    // An id in another form is refused, with the form it should have.
    const wrong = await fetch(gw.mcpUrl, {
      headers: { authorization: `Bearer ${gw.token}`, accept: 'text/event-stream', ...s.headers, 'last-event-id': '1' },
    });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(await wrong.json())).toContain('<epoch>-<n>');
    expect(text).toMatch(/"method":"notifications\/message"/);
  });
});

describe('security on HTTP', () => {
  it('answers 401 with WWW-Authenticate without the token, and never echoes it', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const none = await fetch(gw.mcpUrl, {
      method: 'POST',
      headers: { accept: ACCEPT, 'content-type': 'application/json' },
      body: JSON.stringify(init()),
    });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="mcp-gateway"');
    const wrong = await post(gw, init(), { authorization: 'Bearer wrong-token-wrong-token' });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain('wrong-token');
  });

  it('answers 403 to a foreign Origin or Host (DNS rebinding), and lets loopback through', async () => {
    const gw = await startHttpGateway(await startToyApi());
    expect((await post(gw, init(), { origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(gw, init(), { origin: `http://localhost:${new URL(gw.url).port}` })).status).toBe(200);
    const port = new URL(gw.url).port;
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const r = request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host: `evil.example:${port}`,
            authorization: `Bearer ${gw.token}`,
            accept: ACCEPT,
            'content-type': 'application/json',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      r.on('error', reject);
      r.end(JSON.stringify(init()));
    });
    expect(status).toBe(403);
  });

  it('refuses Origins and Hosts that only look like allowed ones', async () => {
    const gw = await startHttpGateway(await startToyApi(), {
      allowedOrigins: ['https://app.example'],
      allowedHosts: ['gateway.example'],
    });
    const port = new URL(gw.url).port;
    for (const origin of [
      'null',
      'http://localhost.evil.example',
      'http://127.0.0.1.nip.io',
      `http://127.0.0.1.nip.io:${port}`,
      'http://localhost@evil.example',
      'https://app.example.evil.example',
      'https://app.example:8443',
      'http://app.example',
      'file://',
    ]) {
      expect((await post(gw, init(), { origin })).status, origin).toBe(403);
    }
    for (const origin of ['http://127.0.0.1', `http://[::1]:${port}`, 'https://app.example', 'https://APP.example']) {
      expect((await post(gw, init(), { origin })).status, origin).toBe(200);
    }
    const { request } = await import('node:http');
    const withHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const r = request(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: { host, authorization: `Bearer ${gw.token}`, accept: ACCEPT, 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        r.on('error', reject);
        r.end(JSON.stringify(init()));
      });
    for (const host of [
      `localhost.evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      'gateway.example.evil.example',
      `evil.example:${port}`,
      `localhost:${port}@evil.example`,
    ]) {
      expect(await withHost(host), host).toBe(403);
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `gateway.example:${port}`, 'GATEWAY.example']) {
      expect(await withHost(host), host).toBe(200);
    }
  });

  it('lets an allowed Origin through', async () => {
    const gw = await startHttpGateway(await startToyApi(), { allowedOrigins: ['https://app.example'] });
    expect((await post(gw, init(), { origin: 'https://app.example' })).status).toBe(200);
  });
});

describe('Streamable HTTP, 2026-07-28 (stateless)', () => {
  const call = (gw: HttpGateway, method: string, params: Record<string, unknown>, headers: Record<string, string>) =>
    post(
      gw,
      { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: { ...modernMeta, ...(params._meta as object) } } },
      headers,
    );

  it('answers server/discover with versions, capabilities and caching fields', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const r = await call(gw, 'server/discover', {}, modernHeaders('server/discover'));
    const { result } = await r.json();
    expect(result).toMatchObject({ resultType: 'complete', cacheScope: 'public', capabilities: { tools: {} } });
    expect(result.supportedVersions).toEqual(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
    expect(typeof result.ttlMs).toBe('number');
    expect(result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('agentwire-mcp-gateway');
  });

  it('puts ttlMs and cacheScope on tools/list and resultType on every result', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const list = await (await call(gw, 'tools/list', {}, modernHeaders('tools/list'))).json();
    expect(list.result).toMatchObject({ resultType: 'complete', ttlMs: 300000, cacheScope: 'public' });
    const result = await (
      await call(gw, 'tools/call', { name: 'health', arguments: {} }, modernHeaders('tools/call', 'health'))
    ).json();
    expect(result.result).toMatchObject({ resultType: 'complete', isError: false });
  });

  it('answers 400 -32020 when Mcp-Method, Mcp-Name or MCP-Protocol-Version disagree with the body', async () => {
    const gw = await startHttpGateway(await startToyApi());
    for (const headers of [
      modernHeaders('tools/list'),
      { ...modernHeaders('tools/call'), 'mcp-name': 'slow' },
      { ...modernHeaders('tools/call', 'health'), 'mcp-protocol-version': '2025-11-25' },
    ]) {
      const r = await call(gw, 'tools/call', { name: 'health', arguments: {} }, headers);
      expect(r.status).toBe(400);
      expect((await r.json()).error.code).toBe(-32020);
    }
    const noMethod = await call(gw, 'tools/list', {}, { 'mcp-protocol-version': '2026-07-28' });
    expect(noMethod.status).toBe(400);
    const encoded = await call(
      gw,
      'tools/call',
      { name: 'health', arguments: {} },
      {
        ...modernHeaders('tools/call'),
        'mcp-name': `=?base64?${Buffer.from('health').toString('base64')}?=`,
      },
    );
    expect(encoded.status).toBe(200);
  });

  it('checks Mcp-Param-* headers against the arguments they mirror (x-mcp-header), before anything runs', async () => {
    const gw = await startHttpGateway(await startToyApi());
    // The toy API's document marks list_employees' `team` with x-mcp.headers: it is listed so.
    const list = await (await call(gw, 'tools/list', {}, modernHeaders('tools/list'))).json();
    const tool = list.result.tools.find((t: { name: string }) => t.name === 'list_employees');
    expect(tool.inputSchema.properties.team).toMatchObject({ type: 'string', 'x-mcp-header': 'Team' });
    const team = (args: Record<string, unknown>, header?: string) =>
      call(
        gw,
        'tools/call',
        { name: 'list_employees', arguments: args },
        {
          ...modernHeaders('tools/call', 'list_employees'),
          ...(header === undefined ? {} : { 'mcp-param-team': header }),
        },
      );
    const agreed = await team({ team: 'legal' }, 'legal');
    expect(agreed.status).toBe(200);
    expect((await agreed.json()).result.structuredContent.data.every((e: { team: string }) => e.team === 'legal')).toBe(
      true,
    );
    expect((await team({ team: 'legal' }, `=?base64?${Buffer.from('legal').toString('base64')}?=`)).status).toBe(200);
    expect((await team({})).status).toBe(200);
    for (const [args, header, says] of [
      [{ team: 'legal' }, 'firmware', 'does not match'],
      [{ team: 'legal' }, undefined, 'is missing'],
      [{}, 'legal', 'is not given'],
      [{ team: 'legal' }, '=?base64?bGVnYWw?=', 'not valid Base64'],
    ] as const) {
      const r = await team(args, header);
      expect(r.status).toBe(400);
      const { error } = await r.json();
      expect(error.code).toBe(-32020);
      expect(error.message).toContain('Mcp-Param-Team');
      expect(error.message).toContain(says);
    }
  });

  it('answers -32022 with the supported versions to an unknown one, and -32602 without capabilities', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const r = await post(
      gw,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { ...modernMeta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      },
      { ...modernHeaders('tools/list'), 'mcp-protocol-version': '2099-01-01' },
    );
    expect(r.status).toBe(400);
    expect((await r.json()).error).toMatchObject({ code: -32022, data: { requested: '2099-01-01' } });
    const noCaps = await post(
      gw,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
      },
      modernHeaders('tools/list'),
    );
    expect((await noCaps.json()).error.code).toBe(-32602);
  });

  it('answers 404 -32601 for methods the revision removed, and 405 to GET and DELETE', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const ping = await call(gw, 'ping', {}, modernHeaders('ping'));
    expect(ping.status).toBe(404);
    expect((await ping.json()).error.code).toBe(-32601);
    // prompts/list is in the revision; this server just offers tools only, and says so.
    const prompts = await call(gw, 'prompts/list', {}, modernHeaders('prompts/list'));
    expect(prompts.status).toBe(404);
    expect((await prompts.json()).error.message).toBe(
      'Method not found: prompts/list; this server offers tools only (its capabilities declare no prompts)',
    );
    const get = await fetch(gw.mcpUrl, {
      headers: { authorization: `Bearer ${gw.token}`, accept: 'text/event-stream' },
    });
    expect(get.status).toBe(405);
    const del = await fetch(gw.mcpUrl, { method: 'DELETE', headers: { authorization: `Bearer ${gw.token}` } });
    expect(del.status).toBe(405);
  });

  it('reports invalid arguments as an isError result', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const r = await (
      await call(gw, 'tools/call', { name: 'slow', arguments: { ms: 'soon' } }, modernHeaders('tools/call', 'slow'))
    ).json();
    expect(r.result.isError).toBe(true);
    expect(r.result.content[0].text).toBe('Invalid arguments for tool slow:\n$.ms: expected integer, got string');
  });
});

describe('serveHttp options', () => {
  it('refuses redisUrl, which the transport no longer turns into a store, and names what to pass', async () => {
    const api = await startToyApi();
    const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key });
    try {
      const options = {
        host: '127.0.0.1',
        port: 0,
        token: undefined,
        allowedOrigins: [],
        redisUrl: 'redis://127.0.0.1:1',
      };
      await expect(serveHttp(gateway, options)).rejects.toThrow(
        /pass store: await createSessionStore\(\{ redisUrl \}\)/,
      );
    } finally {
      await gateway.close();
    }
  });
});
