// A reader slower than its event stream: progress notifications that find the connection full
// are left out, every other message is written. A real Fastify server with the plugin the
// gateway uses, on loopback; the client reads nothing until the server has written it all.
import type { AddressInfo } from 'node:net';
import { fastifySSE } from '@fastify/sse';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { openEventStream, sendMessage } from '../src/transports/http/event-stream.js';
import { onCleanup } from './support/stack.js';

it('leaves out the progress notifications that find the connection full, and writes the answer', async () => {
  const app = Fastify();
  await app.register(fastifySSE);
  const sent = 20_000;
  let written = () => {};
  const done = new Promise<void>((resolve) => {
    written = resolve;
  });
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
    sendMessage(app.log, stream, { jsonrpc: '2.0', id: 1, result: { done: true } });
    written();
    setImmediate(() => stream.close());
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onCleanup(() => app.close());
  const response = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/stream`);
  await done;
  const text = await response.text();
  const progress = [...text.matchAll(/"progress":(\d+)/g)].map((m) => Number(m[1]));
  expect(progress.length).toBeGreaterThan(0);
  expect(progress.length).toBeLessThan(sent / 2);
  expect(progress.every((p, i) => i === 0 || p > (progress[i - 1] as number))).toBe(true);
  expect(text).toContain('"id":1,"result":{"done":true}');
});
