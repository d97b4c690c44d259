// A reader slower than its event stream: every message is written, in order, and nothing piles
// up per waiting write (the plugin's own send added two listeners to the response for each, past
// Node's MaxListenersExceededWarning). A real Fastify server with the plugin the gateway uses,
// on loopback; the client reads nothing until the server has written it all.
import type { AddressInfo } from 'node:net';
import { fastifySSE } from '@fastify/sse';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { openEventStream, sendMessage } from '../src/transports/http/event-stream.js';
import { onCleanup } from './support/stack.js';

it('writes every message in order to a client that reads late, with no listener per waiting write', async () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  onCleanup(async () => {
    process.off('warning', onWarning);
  });
  const app = Fastify();
  await app.register(fastifySSE);
  const sent = 20_000;
  let written = () => {};
  const done = new Promise<void>((resolve) => {
    written = resolve;
  });
  let listeners = 0;
  app.get('/stream', { sse: 'manual' }, (_request, reply) => {
    const stream = openEventStream(reply);
    // 20,000 notifications of 1 KB in one go: far more than the sockets hold.
    for (let i = 1; i <= sent; i++) {
      sendMessage(app.log, stream, {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 't', progress: i, message: 'x'.repeat(1000) },
      });
    }
    sendMessage(app.log, stream, { jsonrpc: '2.0', id: 1, result: { done: true } }, '7-1');
    listeners = reply.raw.listenerCount('drain');
    written();
    setImmediate(() => stream.close());
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onCleanup(() => app.close());
  const response = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/stream`);
  await done;
  const text = await response.text();
  const progress = [...text.matchAll(/"progress":(\d+)/g)].map((m) => Number(m[1]));
  expect(progress).toEqual(Array.from({ length: sent }, (_, i) => i + 1));
  expect(text.endsWith('id: 7-1\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"done":true}}\n\n')).toBe(
    true,
  );
  expect(listeners).toBeLessThan(3);
  expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
});

it('cuts a resumable stream whose client leaves more than its bound unread, and frees what waited', async () => {
  const app = Fastify();
  await app.register(fastifySSE);
  let cut = false;
  let waitingAtMost = 0;
  let written = () => {};
  const done = new Promise<void>((resolve) => {
    written = resolve;
  });
  app.get('/stream', { sse: 'manual' }, (_request, reply) => {
    const stream = openEventStream(reply, { maxBufferBytes: 1024 * 1024 });
    for (let i = 1; i <= 20_000 && !reply.raw.destroyed; i++) {
      sendMessage(
        app.log,
        stream,
        { jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(1000) } },
        `1-${i}`,
      );
      waitingAtMost = Math.max(waitingAtMost, reply.raw.writableLength);
    }
    cut = reply.raw.destroyed;
    written();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onCleanup(() => app.close());
  const response = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/stream`);
  await done;
  expect(cut).toBe(true);
  // Cut once past the bound: what waited was never much more than it (one message more).
  expect(waitingAtMost).toBeLessThan(1024 * 1024 + 2048);
  // The client gets what the socket held, then the stream ends: far from all of it.
  const text = await response.text().catch(() => '');
  expect(text.split('event: message').length - 1).toBeLessThan(20_000);
});

it('does not cut a stream for one message larger than its bound, to a client that reads', async () => {
  const app = Fastify();
  await app.register(fastifySSE);
  let cut = true;
  app.get('/stream', { sse: 'manual' }, (_request, reply) => {
    const stream = openEventStream(reply, { maxBufferBytes: 1024 * 1024 });
    sendMessage(app.log, stream, { jsonrpc: '2.0', id: 1, result: { text: 'y'.repeat(2 * 1024 * 1024) } }, '1-1');
    cut = reply.raw.destroyed;
    setImmediate(() => stream.close());
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onCleanup(() => app.close());
  const text = await (await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/stream`)).text();
  expect(cut).toBe(false);
  expect(text.length).toBeGreaterThan(2 * 1024 * 1024);
  expect(text.endsWith('"}}\n\n')).toBe(true);
});
