// The tasks extension (SEP-2663) over the toy API's export, a real long job (POST /exports ->
// 202 + Location, GET -> progress, 303 -> the file, DELETE -> cancelled): a client of the
// extension gets a task and polls it; any other client gets the file, the gateway following the
// job; tasks belong to their caller, are bounded per caller, and live in Redis so that another
// replica answers for a task after the one that created it is gone.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedis } from '../../../test-support/redis-server.js';
import { createGateway } from '../src/gateway.js';
import type { Caller } from '../src/protocol/messages.js';
import { RedisTaskStore } from '../src/tools/task-store.js';
import {
  type HttpGateway,
  httpV1,
  modernRequest,
  onCleanup,
  startHttpGateway,
  startHttpGatewayFor,
  startToyApi,
} from './support/stack.js';

const TASKS = { 'io.modelcontextprotocol/tasks': {} };

/** One 2026-07-28 request; `tasks` declares the extension in its capabilities; `headers` win over the usual ones. */
function rpc(
  gw: HttpGateway,
  method: string,
  params: Record<string, unknown>,
  tasks = true,
  headers: Record<string, string> = {},
) {
  return modernRequest(gw, method, params, { capabilities: tasks ? { extensions: TASKS } : {}, headers });
}

/** Polls tasks/get until the task has ended (the job takes its duration_ms upstream). */
async function settle(gw: HttpGateway, taskId: string) {
  for (let i = 0; i < 100; i++) {
    const { body } = await rpc(gw, 'tasks/get', { taskId });
    if (['completed', 'failed', 'cancelled'].includes(body.result?.status)) return body.result;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${taskId} did not end`);
}

describe('tasks over an upstream job (the toy API export)', () => {
  it('gives a client of the extension a task, stored before the answer, that ends with the file inlined', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const discover = await rpc(gw, 'server/discover', {});
    expect(discover.body.result.capabilities.extensions).toEqual(TASKS);

    const created = await rpc(gw, 'tools/call', {
      name: 'export_emails',
      arguments: { date: '2026-06-08', duration_ms: 300 },
    });
    const task = created.body.result;
    expect(task).toMatchObject({ resultType: 'task', status: 'working' });
    expect(task.taskId).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(Number.isInteger(task.ttlMs) && Number.isInteger(task.pollIntervalMs)).toBe(true);
    // The upstream's Retry-After (1 s) is the interval; no result or content on a CreateTaskResult.
    expect(task.pollIntervalMs).toBe(1000);
    expect(task).not.toHaveProperty('content');
    expect(task).not.toHaveProperty('result');

    // Right away: the task is there (durably created before the answer), still working.
    const first = await rpc(gw, 'tasks/get', { taskId: task.taskId });
    expect(first.body.result).toMatchObject({ resultType: 'complete', taskId: task.taskId, status: 'working' });

    const ended = await settle(gw, task.taskId);
    expect(ended.status).toBe('completed');
    expect(ended.result.isError).toBe(false);
    const file = JSON.parse(ended.result.content[0].text);
    expect(file).toMatchObject({ date: '2026-06-08', count: 57 });
    expect(ended.result).not.toHaveProperty('accepted');
    // Ended is ended: asking again reads the stored task, with the same result.
    expect((await rpc(gw, 'tasks/get', { taskId: task.taskId })).body.result.result).toEqual(ended.result);
  });

  it('follows the job to its end for a client without the extension, as one tools/call', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const { client } = await httpV1(gw, '2025-06-18');
    const result = (await client.callTool({
      name: 'export_emails',
      arguments: { date: '2026-06-09', duration_ms: 200 },
    })) as { isError: boolean; content: Array<{ text: string }> };
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.content[0]?.text ?? '')).toMatchObject({ date: '2026-06-09' });
    // Nor does a 2026-07-28 client that did not declare the extension get a task.
    const plain = await rpc(
      gw,
      'tools/call',
      { name: 'export_emails', arguments: { date: '2026-06-09', duration_ms: 0 } },
      false,
    );
    expect(plain.body.result.resultType).toBe('complete');
    expect(plain.body.result.isError).toBe(false);
  });

  it('says so when the job outlives the call: the deadline ran out, the job was not cancelled', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const r = await rpc(
      gw,
      'tools/call',
      {
        name: 'export_emails',
        arguments: { date: '2026-06-09', duration_ms: 60_000 },
        _meta: { 'agentwire.dev/deadlineMs': 500 },
      },
      false,
    );
    expect(r.body.result.isError).toBe(true);
    expect(r.body.result.content[0].text).toMatch(
      /the upstream accepted the job and it was still running when this call's deadline \(\d+ ms\) ran out; it was not cancelled/,
    );
  });

  it('cancels: the task ends cancelled and the upstream job is stopped through its DELETE', async () => {
    const api = await startToyApi();
    const gw = await startHttpGateway(api);
    const created = await rpc(gw, 'tools/call', {
      name: 'export_emails',
      arguments: { date: '2026-06-10', duration_ms: 60_000 },
    });
    const { taskId } = created.body.result;
    const ack = await rpc(gw, 'tasks/cancel', { taskId });
    expect(ack.body.result).toEqual({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': expect.any(Object) },
    });
    const after = await rpc(gw, 'tasks/get', { taskId });
    expect(after.body.result.status).toBe('cancelled');
    expect(after.body.result.statusMessage).toMatch(/stopped upstream \(cancel_export\)/);
    // Cancelling an ended task is the same ack; it stays cancelled.
    expect((await rpc(gw, 'tasks/cancel', { taskId })).body.result.resultType).toBe('complete');
    expect((await rpc(gw, 'tasks/get', { taskId })).body.result.status).toBe('cancelled');
  });

  it('refuses what the extension defines as errors: unknown ids, an undeclared extension, removed methods, a wrong Mcp-Name', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const unknown = await rpc(gw, 'tasks/get', { taskId: 'no-such-task' });
    expect(unknown.body.error.code).toBe(-32602);
    expect(unknown.body.error.message).toMatch(/Unknown task: no-such-task \(tasks are kept 3600 s after they start/);
    // Over HTTP a taskId that is not a string fails the Mcp-Name check first (-32020).
    expect((await rpc(gw, 'tasks/get', { taskId: 42 })).body.error.code).toBe(-32020);
    const long = await rpc(gw, 'tasks/get', { taskId: 'x'.repeat(101) });
    expect(long.body.error.message).toMatch(/^Unknown task: x{100} \(/);
    const undeclared = await rpc(gw, 'tasks/get', { taskId: 'x' }, false);
    expect(undeclared.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: TASKS } },
    });
    for (const removed of ['tasks/list', 'tasks/result']) {
      expect((await rpc(gw, removed, { taskId: 'x' })).body.error.code).toBe(-32601);
    }
    const badUpdate = await rpc(gw, 'tasks/update', { taskId: 'x', inputResponses: 'yes' });
    expect(badUpdate.body.error.code).toBe(-32602);
    const created = await rpc(gw, 'tools/call', { name: 'export_emails', arguments: { date: '2026-06-10' } });
    const r = await rpc(gw, 'tasks/get', { taskId: created.body.result.taskId }, true, { 'mcp-name': 'another-task' });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      code: -32020,
      message: expect.stringMatching(/Mcp-Name header 'another-task' does not match params.taskId/),
    });
  });

  it("keeps each caller's tasks its own, and bounds how many a caller holds (the rest are followed)", async () => {
    const api = await startToyApi();
    const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key, tasks: { maxPerCaller: 1 } });
    onCleanup(() => gateway.close());
    const as = (subject: string): Caller => ({ subject, scopes: [] });
    const call = (method: string, params: Record<string, unknown>, caller: Caller) =>
      gateway.server
        .handle(
          {
            jsonrpc: '2.0',
            id: 1,
            method,
            params: {
              ...params,
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': { extensions: TASKS },
              },
            },
          },
          { signal: new AbortController().signal, notify: () => undefined, caller, session: undefined },
        )
        .then((outcome) => (outcome as unknown as { response: { result?: any; error?: any } }).response);
    const exportCall = { name: 'export_emails', arguments: { date: '2026-06-11', duration_ms: 50 } };
    const first = await call('tools/call', exportCall, as('alice'));
    const task = first.result;
    expect(task.resultType).toBe('task');
    for (const taskId of [42, '', null]) {
      const bad = await call('tasks/get', { taskId }, as('alice'));
      expect(bad.error).toMatchObject({ code: -32602, message: expect.stringMatching(/must be a non-empty string/) });
    }
    const theirs = await call('tasks/get', { taskId: task.taskId }, as('mallory'));
    expect(theirs.error.code).toBe(-32602);
    const cancel = await call('tasks/cancel', { taskId: task.taskId }, as('mallory'));
    expect(cancel.error.code).toBe(-32602);
    // alice holds one task, her limit: her next export is followed to the end instead.
    const second = await call('tools/call', exportCall, as('alice'));
    expect(second.result).toMatchObject({ resultType: 'complete', isError: false });
    // Another caller has room of their own.
    const bobs = await call('tools/call', exportCall, as('bob'));
    expect(bobs.result.resultType).toBe('task');
  });
});

describe('tasks in Redis', () => {
  it('lets another replica answer for a task after the replica that created it is gone', async () => {
    const redis = await startRedis();
    onCleanup(() => redis.stop());
    const api = await startToyApi();
    const replica = async () => {
      const connection = new Redis(redis.url);
      return startHttpGatewayFor({
        upstreamUrl: api.url,
        upstreamApiKey: api.key,
        tasks: { store: new RedisTaskStore(connection, 'tasks-test:', true) },
      });
    };
    const a = await replica();
    const b = await replica();
    const created = await rpc(a, 'tools/call', {
      name: 'export_emails',
      arguments: { date: '2026-06-12', duration_ms: 200 },
    });
    const { taskId } = created.body.result;
    await a.close();
    await a.gateway?.close();
    // The gateways share no token: b's requests carry b's.
    const ended = await settle(b, taskId);
    expect(ended.status).toBe('completed');
    expect(JSON.parse(ended.result.content[0].text)).toMatchObject({ date: '2026-06-12' });
    // A final state is final on every replica: a cancel after it changes nothing.
    await rpc(b, 'tasks/cancel', { taskId });
    expect((await rpc(b, 'tasks/get', { taskId })).body.result.status).toBe('completed');
  });
});

describe('tasks over the conformance fixture: a failing job, one the gateway cannot follow, one only a task may start', () => {
  it('ends each as the extension says: completed with isError, failed with a JSON-RPC error, -32021 without the extension', async () => {
    const { startFixtureUpstream } = await import('../conformance/fixture-upstream.mjs');
    const fixture = await startFixtureUpstream();
    onCleanup(() => fixture.close());
    const gw = await startHttpGatewayFor({ upstreamUrl: fixture.url, openapi: fixture.documentUrl });

    const failing = await rpc(gw, 'tools/call', { name: 'failing_job', arguments: {} });
    const failed = await settle(gw, failing.body.result.taskId);
    expect(failed).toMatchObject({ status: 'completed', result: { isError: true } });
    expect(failed.result.content[0].text).toMatch(
      /the upstream job failed \(status 'failed'\): the job failed, on purpose/,
    );

    const broken = await rpc(gw, 'tools/call', { name: 'protocol_error_job', arguments: {} });
    const lost = await settle(gw, broken.body.result.taskId);
    expect(lost.status).toBe('failed');
    expect(lost).not.toHaveProperty('result');
    expect(lost.error).toMatchObject({ code: -32603, message: expect.stringMatching(/is not under its base URL/) });

    const refused = await rpc(gw, 'tools/call', { name: 'failing_job', arguments: {} }, false);
    expect(refused.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: TASKS } },
    });
    // The same tool without the extension is refused before anything is sent upstream.
    expect(refused.body.error.message).toMatch(/Nothing was sent upstream/);

    // An upstream that answers at once (200, no job) gives a plain result even to a client of the extension.
    const quick = await rpc(gw, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'now' } });
    expect(quick.body.result).toMatchObject({ resultType: 'complete', isError: false });
  });
});

describe('tasks over an upstream that answers the hard cases', () => {
  it('takes what a redirect leads to as the result, never deletes what merely ends like the status path, and keeps a task working through a failed look', async () => {
    const { createServer } = await import('node:http');
    const deleted: string[] = [];
    let statusAnswers: 'hang' | 'redirect' = 'hang';
    const server = createServer((request, response) => {
      const path = request.url ?? '/';
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      if (request.method === 'DELETE') {
        deleted.push(path);
        return response.writeHead(204).end();
      }
      if (path === '/orders' && request.method === 'POST')
        return json(202, {}, { location: '/queue/reports/42', 'retry-after-ms': '100' });
      if (path === '/queue/reports/42') {
        // Looks that get no answer in time, until the test lets the redirect to the order through.
        if (statusAnswers === 'hang') return undefined;
        return response.writeHead(303, { location: '/orders/42' }).end();
      }
      // The order itself has a status of its own, which says nothing of the job.
      if (path === '/orders/42') return json(200, { id: 42, status: 'pending' });
      return json(404, {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise((resolve) => server.close(() => resolve(undefined))));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const ok = { 200: { description: 'ok' } };
    const gw = await startHttpGatewayFor({
      upstreamUrl: url,
      upstreamTimeoutMs: 300,
      openapi: {
        openapi: '3.1.0',
        info: { title: 'orders', version: '1' },
        paths: {
          '/orders': { post: { operationId: 'order', responses: { 202: { description: 'accepted' } } } },
          '/reports/{id}': {
            delete: {
              operationId: 'delete_report',
              parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
              responses: ok,
            },
          },
        },
      },
    });
    const created = await rpc(gw, 'tools/call', { name: 'order', arguments: {} });
    const { taskId } = created.body.result;
    // The first look times out: the task stays working, saying so.
    await new Promise((r) => setTimeout(r, 150));
    const looked = await rpc(gw, 'tasks/get', { taskId });
    expect(looked.body.result.status).toBe('working');
    expect(looked.body.result.statusMessage).toMatch(/the status check failed, the job may still be running/);
    statusAnswers = 'redirect';
    const ended = await settle(gw, taskId);
    expect(ended.status).toBe('completed');
    expect(JSON.parse(ended.result.content[0].text)).toEqual({ id: 42, status: 'pending' });

    // Cancel another such task: /queue/reports/42 is not /reports/{id}, so nothing is deleted.
    statusAnswers = 'hang';
    const second = await rpc(gw, 'tools/call', { name: 'order', arguments: {} });
    await rpc(gw, 'tasks/cancel', { taskId: second.body.result.taskId });
    const cancelled = await rpc(gw, 'tasks/get', { taskId: second.body.result.taskId });
    expect(cancelled.body.result.status).toBe('cancelled');
    expect(cancelled.body.result.statusMessage).toMatch(/the upstream has no DELETE for the job/);
    expect(deleted).toEqual([]);
  });
});
