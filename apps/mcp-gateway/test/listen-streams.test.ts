// subscriptions/listen (2026-07-28): the acknowledgement first, only the kinds asked for, each
// tagged with the subscription's id; a reload reaches the streams; limits refuse with a reason;
// a closing server answers each listen request. Across replicas: replicas.test.ts.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { messagesOf, postListen } from './support/listen.js';
import { type HttpGateway, startHttpGatewayFor, startToyApi } from './support/stack.js';

const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
const spec = (...ids: string[]) =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'L', version: '1' },
    paths: Object.fromEntries(ids.map((id) => [`/${id}`, { get: { operationId: id, responses: ok } }])),
  });
let files = 0;

async function gatewayOnFile(extra: Parameters<typeof startHttpGatewayFor>[1] = {}) {
  const file = join(tmpdir(), `agentwire-listen-${process.pid}-${files++}.json`);
  writeFileSync(file, spec('alpha'));
  const api = await startToyApi();
  const gw = await startHttpGatewayFor({ upstreamUrl: api.url, openapi: file }, extra);
  return { gw, file };
}

const listen = (gw: HttpGateway, id: number | string, notifications: unknown) =>
  postListen(gw.mcpUrl, gw.token, id, notifications);

describe('subscriptions/listen', () => {
  it('acknowledges first, then sends tools/list_changed on a reload, tagged with the subscription id', async () => {
    const { gw, file } = await gatewayOnFile();
    const response = await listen(gw, 41, { toolsListChanged: true, promptsListChanged: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const stream = messagesOf(response);
    expect(await stream.until(1)).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        // Prompts are not something a tools-only gateway has: left out of what it agrees to.
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 41 }, notifications: { toolsListChanged: true } },
      },
    ]);
    writeFileSync(file, spec('alpha', 'beta'));
    expect(await gw.gateway?.reload('test')).toMatchObject({ changed: true });
    expect((await stream.until(2))[1]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 41 } },
    });
    await stream.stop();
  });

  it('sends only the kinds asked for', async () => {
    const { gw, file } = await gatewayOnFile();
    const prompts = messagesOf(await listen(gw, 'p', { promptsListChanged: true }));
    const tools = messagesOf(await listen(gw, 't', { toolsListChanged: true }));
    expect((await prompts.until(1))[0]?.params).toEqual({
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'p' },
      notifications: {},
    });
    await tools.until(1);
    writeFileSync(file, spec('alpha', 'gamma'));
    await gw.gateway?.reload('test');
    // The tools stream hears it; by then the prompts stream would have too, had it been sent.
    expect((await tools.until(2))[1]?.method).toBe('notifications/tools/list_changed');
    expect(await prompts.until(2, 300)).toHaveLength(1);
    await Promise.all([prompts.stop(), tools.stop()]);
  });

  it('refuses a request without a filter, and streams past the limits, naming them', async () => {
    const { gw } = await gatewayOnFile({ listenLimits: { max: 3, perCaller: 2 } });
    const bad = await listen(gw, 1, { toolsListChanged: 'yes' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({
      code: -32602,
      message: 'params.notifications.toolsListChanged must be true or false',
    });
    const none = await listen(gw, 1, undefined);
    expect((await none.json()).error.message).toMatch(/needs params.notifications: an object/);

    const open = [messagesOf(await listen(gw, 1, { toolsListChanged: true }))];
    open.push(messagesOf(await listen(gw, 2, { toolsListChanged: true })));
    await Promise.all(open.map((s) => s.until(1)));
    const third = await listen(gw, 3, { toolsListChanged: true });
    expect(third.status).toBe(429);
    expect((await third.json()).error.message).toMatch(/holds 2, the limit \(MAX_LISTEN_STREAMS_PER_CALLER\)/);
    // A closed stream frees its place.
    await open.pop()?.stop();
    await expect
      .poll(async () => {
        const again = await listen(gw, 4, { toolsListChanged: true });
        if (again.status === 200) open.push(messagesOf(again));
        else await again.body?.cancel();
        return again.status;
      })
      .toBe(200);
    await Promise.all(open.map((s) => s.stop()));
  });

  it('refuses past MAX_LISTEN_STREAMS in all', async () => {
    const { gw } = await gatewayOnFile({ listenLimits: { max: 1, perCaller: 5 } });
    const first = messagesOf(await listen(gw, 1, { toolsListChanged: true }));
    await first.until(1);
    const second = await listen(gw, 2, { toolsListChanged: true });
    expect(second.status).toBe(429);
    expect((await second.json()).error).toMatchObject({
      code: -32029,
      message: expect.stringMatching(/MAX_LISTEN_STREAMS\)/),
    });
    await first.stop();
  });

  it('answers each listen request with its subscription id when the server closes', async () => {
    const { gw } = await gatewayOnFile();
    const stream = messagesOf(await listen(gw, 9, { toolsListChanged: true }));
    await stream.until(1);
    const closing = gw.close();
    expect((await stream.until(2))[1]).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 9 } },
    });
    await closing;
  });
});
