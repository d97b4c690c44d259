import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedis } from '../../../test-support/redis-server.js';
import { messagesOf, postListen } from './support/listen.js';
import { initializeRequest, onCleanup, spawnGateway, startToyApi } from './support/stack.js';

const ACCEPT = 'application/json, text/event-stream';

async function gatewayProcess(env: Record<string, string>) {
  const { stderr } = await spawnGateway({ ...env, PORT: '0' });
  await expect
    .poll(() => stderr(), { timeout: 10_000, interval: 20 })
    .toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/mcp"/);
  return /"url":"(http:[^"]+)"/.exec(stderr())?.[1] ?? '';
}

describe('two gateway replicas on one Redis', () => {
  it('serve one session alternately, and resume its stream on the other replica', async () => {
    const api = await startToyApi();
    const redisUrl = process.env.REDIS_URL ?? '';
    expect(redisUrl).not.toBe('');
    const token = 'r'.repeat(24);
    const env = {
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      MCP_GATEWAY_TOKEN: token,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `test-${randomUUID()}:`,
    };
    const replicas = [await gatewayProcess(env), await gatewayProcess(env)];
    let turn = 0;
    // A round-robin balancer: every request goes to the next replica.
    const next = () => replicas[turn++ % 2] as string;
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(next(), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, accept: ACCEPT, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });

    const init = await post(initializeRequest('2025-11-25', {}, 'rr'));
    const sessionId = init.headers.get('mcp-session-id') ?? '';
    const s = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, s)).status).toBe(202);
    expect(
      (await (await post({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } }, s)).json())
        .result,
    ).toEqual({});

    for (let i = 0; i < 4; i++) {
      const r = await post(
        { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'health', arguments: {} } },
        s,
      );
      expect((await r.json()).result.isError).toBe(false);
    }
    // The log level set on one replica applied on both: four log events in the shared stream.
    const readStream = async (url: string, lastEventId: string | undefined, until: string) => {
      const r = await fetch(url, {
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'text/event-stream',
          ...s,
          ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
        },
      });
      expect(r.status).toBe(200);
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      while (!text.includes(until)) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      return text;
    };
    // Ids are <epoch>-<n>, one epoch while Redis runs; `0-0` comes before any.
    const first = await readStream(replicas[0] as string, '0-0', '-2\n');
    const epoch = /^id: (\d+)-1$/m.exec(first)?.[1];
    expect(epoch).toMatch(/^\d+$/);
    // Resume on the other replica after the last event seen: only the later events come.
    const resumed = await readStream(replicas[1] as string, `${epoch}-2`, `id: ${epoch}-4\n`);
    // A resumed stream's priming event (2025-11-25) is `retry` alone: no id is repeated.
    expect(resumed.startsWith('retry: 1000\n\n')).toBe(true);
    expect(resumed).not.toContain(`id: ${epoch}-2\n`);
    expect(resumed).toContain(`id: ${epoch}-3\n`);

    // Live events cross replicas too: a call on one reaches the stream held on the other.
    const live = fetch(replicas[0] as string, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...s, 'last-event-id': `${epoch}-4` },
    });
    const stream = await live;
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    await fetch(replicas[1] as string, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, accept: ACCEPT, 'content-type': 'application/json', ...s },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'health', arguments: {} } }),
    });
    // Read until event 5 arrives; if the stream ends or stalls first, say what it did carry.
    let text = '';
    const deadline = Date.now() + 10_000;
    while (!text.includes(`id: ${epoch}-5\n`)) {
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`no event 5 within 10 s; the stream carried: ${JSON.stringify(text)}`)),
            Math.max(0, deadline - Date.now()),
          ),
        ),
      ]);
      if (chunk.done) throw new Error(`the stream ended before event 5; it carried: ${JSON.stringify(text)}`);
      text += new TextDecoder().decode(chunk.value);
    }

    // Ended on the other replica, the session's stream ends here too (it was told over Redis).
    const del = await fetch(replicas[1] as string, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, ...s },
    });
    expect(del.status).toBe(204);
    const ended = await Promise.race([
      (async () => {
        for (;;) if ((await reader.read()).done) return 'ended';
      })(),
      new Promise<string>((resolve) => setTimeout(() => resolve('still open after 10 s'), 10_000)),
    ]);
    expect(ended).toBe('ended');
    expect((await post({ jsonrpc: '2.0', id: 5, method: 'ping' }, s)).status).toBe(404);
  });

  it('cancel a request on one replica with a notification sent to the other', async () => {
    const api = await startToyApi();
    const token = 'c'.repeat(24);
    const env = {
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      MCP_GATEWAY_TOKEN: token,
      REDIS_URL: process.env.REDIS_URL ?? '',
      REDIS_PREFIX: `test-${randomUUID()}:`,
    };
    const [a, b] = [await gatewayProcess(env), await gatewayProcess(env)] as [string, string];
    const headers = { authorization: `Bearer ${token}`, accept: ACCEPT, 'content-type': 'application/json' };
    const init = await fetch(a, {
      method: 'POST',
      headers,
      body: JSON.stringify(initializeRequest('2025-11-25', {}, 'x')),
    });
    const s = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-11-25' };
    const slow = fetch(a, {
      method: 'POST',
      headers: { ...headers, ...s },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 42,
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 8000 } },
      }),
    });
    await expect.poll(() => api.app.toy.activeSlowTimers(), { timeout: 15_000 }).toBe(1);
    const note = await fetch(b, {
      method: 'POST',
      headers: { ...headers, ...s },
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 42, reason: 'changed my mind' },
      }),
    });
    expect(note.status).toBe(202);
    await expect.poll(() => api.app.toy.slowEndedEarly(), { timeout: 15_000 }).toBe(1);
    expect(api.app.toy.activeSlowTimers()).toBe(0);
    const answer = await slow;
    // No response is sent for a cancelled request: the stream ends without one.
    expect(answer.headers.get('content-type')).toContain('text/event-stream');
    expect(await answer.text()).not.toContain('"id":42');
  });
});

describe('replicas on a Redis with a password and a session cap', () => {
  it('send REDIS_PASSWORD with AUTH, hold MAX_SESSIONS across replicas, and never print the password', async () => {
    const password = randomUUID().replaceAll('-', '');
    const redis = await startRedis({ args: ['--requirepass', password] });
    onCleanup(() => redis.stop());
    const api = await startToyApi();
    const token = 'p'.repeat(24);
    const env = {
      UPSTREAM_URL: api.url,
      UPSTREAM_API_KEY: api.key,
      MCP_GATEWAY_TOKEN: token,
      REDIS_URL: redis.url,
      REDIS_PREFIX: `test-${randomUUID()}:`,
      MAX_SESSIONS: '2',
    };

    const wrong = `wrong-${randomUUID()}`;
    const refused = await spawnGateway({ ...env, PORT: '0', REDIS_PASSWORD: wrong });
    const [code] = await once(refused.child, 'close');
    expect(code).toBe(2);
    expect(refused.stderr()).toMatch(
      /^mcp-gateway: cannot connect to Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\): .*\(set REDIS_PASSWORD to the password Redis was started with\)\n$/,
    );
    expect(refused.stderr()).not.toContain(wrong);

    const withPassword = { ...env, REDIS_PASSWORD: password };
    const [a, b] = [await gatewayProcess(withPassword), await gatewayProcess(withPassword)] as [string, string];
    const open = (url: string) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, accept: ACCEPT, 'content-type': 'application/json' },
        body: JSON.stringify(initializeRequest('2025-11-25', {}, 'x')),
      });
    const first = await open(a);
    expect(first.status).toBe(200);
    const second = await open(b);
    expect(second.status).toBe(200);
    const third = await open(a);
    expect(third.status).toBe(503);
    expect(((await third.json()) as { error: { message: string } }).error.message).toBe(
      'Server busy: too many open sessions (2, MAX_SESSIONS); try again later',
    );
    expect((await open(b)).status).toBe(503);

    // A place is free again, but Redis is at its memory limit: refused, and said so.
    const closed = await fetch(b, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'mcp-session-id': first.headers.get('mcp-session-id') ?? '' },
    });
    expect(closed.status).toBe(204);
    const admin = new Redis(redis.url, { password });
    onCleanup(async () => admin.disconnect());
    // Three connections a replica: the sessions' two (commands, subscriptions) and one the tool
    // layer's five stores share (quotas, tasks, keyed writes, used approval states, breakers).
    const names = async () =>
      ((await admin.client('LIST')) as string)
        .split('\n')
        .map((line) => /\bname=(\S*)/.exec(line)?.[1])
        .filter(Boolean)
        .sort();
    await expect
      .poll(names)
      .toEqual([
        'mcp-gateway-sessions',
        'mcp-gateway-sessions',
        'mcp-gateway-sessions',
        'mcp-gateway-sessions',
        'mcp-gateway-stores',
        'mcp-gateway-stores',
      ]);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    const full = await open(a);
    expect(full.status).toBe(503);
    expect(((await full.json()) as { error: { message: string } }).error.message).toBe(
      'Server busy: the session store (Redis) is at its memory limit (maxmemory); try again later',
    );
    // A session already open still answers, and is kept alive (its place in the count moves on):
    // none of that needs memory. And it can still be ended.
    const secondId = second.headers.get('mcp-session-id') ?? '';
    const placed = Number(await admin.zscore(`${env.REDIS_PREFIX}sessions`, secondId));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const ping = await fetch(a, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        accept: ACCEPT,
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-11-25',
        'mcp-session-id': secondId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(Number(await admin.zscore(`${env.REDIS_PREFIX}sessions`, secondId))).toBeGreaterThan(placed);
    const ended = await fetch(b, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'mcp-session-id': secondId },
    });
    expect(ended.status).toBe(204);
    expect(await admin.zscore(`${env.REDIS_PREFIX}sessions`, secondId)).toBeNull();
  });
});

/**
 * Replicas of one gateway on one Redis, serving an OpenAPI file the test rewrites (so that a
 * SIGHUP to one of them is a reload with a change). `spec(...ids)` writes operations by id.
 */
async function replicasOnASpecFile(label: string) {
  const api = await startToyApi();
  const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
  const file = join(tmpdir(), `agentwire-replica-${label}-${randomUUID()}.json`);
  const spec = (...ids: string[]) =>
    writeFileSync(
      file,
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 'R', version: '1' },
        paths: Object.fromEntries(ids.map((id) => [`/${id}`, { get: { operationId: id, responses: ok } }])),
      }),
    );
  spec('alpha');
  const token = `${label}-`.padEnd(24, 'r');
  const env = {
    UPSTREAM_URL: api.url,
    OPENAPI_URL: file,
    OPENAPI_WATCH: 'off',
    MCP_GATEWAY_TOKEN: token,
    REDIS_URL: process.env.REDIS_URL ?? '',
    REDIS_PREFIX: `test-${randomUUID()}:`,
    PORT: '0',
  };
  const started = async () => {
    const spawned = await spawnGateway(env);
    await expect.poll(() => spawned.stderr(), { timeout: 10_000 }).toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/mcp"/);
    return { ...spawned, url: /"url":"(http:[^"]+)"/.exec(spawned.stderr())?.[1] ?? '' };
  };
  return { spec, token, started };
}

describe('a reload on one replica', () => {
  it('makes the others reload, and a session whose stream is on another replica hears it', async () => {
    const { spec, token, started } = await replicasOnASpecFile('reload');
    const [a, b] = [await started(), await started()];
    const headers = { authorization: `Bearer ${token}`, accept: ACCEPT, 'content-type': 'application/json' };
    const init = await fetch(a.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(initializeRequest('2025-11-25', {}, 'rr')),
    });
    const s = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-11-25' };
    await fetch(b.url, {
      method: 'POST',
      headers: { ...headers, ...s },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    // The session's GET stream is held by replica b; the reload is asked of replica a.
    const stream = await fetch(b.url, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...s },
    });
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    spec('alpha', 'beta');
    a.child.kill('SIGHUP');
    let text = '';
    const deadline = Date.now() + 10_000;
    // One read at a time: a read that loses the race to the timer is kept for the next turn
    // (dropping it dropped its chunk: this test once missed the notification that way).
    let pending: ReturnType<typeof reader.read> | undefined;
    while (!text.includes('notifications/tools/list_changed') && Date.now() < deadline) {
      pending ??= reader.read();
      const chunk = await Promise.race([pending, new Promise<undefined>((r) => setTimeout(() => r(undefined), 500))]);
      if (chunk === undefined) continue;
      pending = undefined;
      if (chunk.done) break;
      if (chunk.value) text += new TextDecoder().decode(chunk.value);
    }
    await reader.cancel();
    expect(text, `the stream on replica b carried: ${JSON.stringify(text)}`).toContain(
      'notifications/tools/list_changed',
    );
    await expect.poll(() => b.stderr(), { timeout: 15_000 }).toMatch(/tools reloaded \(another replica reloaded\)/);
    await expect.poll(() => a.stderr(), { timeout: 15_000 }).toMatch(/tools reloaded \(SIGHUP\)/);
    const listed = await fetch(b.url, {
      method: 'POST',
      headers: { ...headers, ...s },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect((await listed.json()).result.tools.map((t: { name: string }) => t.name)).toEqual(['alpha', 'beta']);
  }, 30_000);

  it('reaches a subscriptions/listen stream held by a third replica, and not one that asked only for prompts', async () => {
    const { spec, token, started } = await replicasOnASpecFile('listen');
    const [a, b, c] = [await started(), await started(), await started()];
    const listen = async (url: string, id: number, notifications: Record<string, boolean>) => {
      const response = await postListen(url, token, id, notifications);
      expect(response.status).toBe(200);
      const stream = messagesOf(response);
      expect((await stream.until(1))[0]?.method).toBe('notifications/subscriptions/acknowledged');
      return stream;
    };
    const tools = await listen(c.url, 7, { toolsListChanged: true });
    const prompts = await listen(b.url, 8, { promptsListChanged: true });
    // The reload is asked of replica a, which holds no stream.
    spec('alpha', 'beta');
    a.child.kill('SIGHUP');
    expect(await tools.until(2, 10_000), "replica c's stream").toContainEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } },
    });
    // Replica b reloaded too; its prompts-only stream stays quiet.
    await expect.poll(() => b.stderr(), { timeout: 15_000 }).toMatch(/tools reloaded \(another replica reloaded\)/);
    expect((await prompts.until(2, 500)).map((m) => m.method)).toEqual(['notifications/subscriptions/acknowledged']);
    await Promise.all([tools.stop(), prompts.stop()]);
  }, 60_000);
});
