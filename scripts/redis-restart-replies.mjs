#!/usr/bin/env node
// Exactly once across Redis restarts, measured: a toy-API process on a real redis-server (with
// its append-only file, as docker-compose.scale.yml runs it), writers that reply to emails with an
// Idempotency-Key each and retry every failure with the same key until they get an answer, and
// Redis stopped (SIGTERM, as `docker restart` does) and started again over and over underneath.
// Then every stored reply is counted per key: a key stored twice is a broken promise, and the
// copies tell how (one id: a write the Redis client resent; two ids: the handler ran twice).
//
//   node scripts/redis-restart-replies.mjs [DIST ...]   (default: apps/toy-api/dist)
// Each DIST is a built toy API (a folder with main.js), e.g. one built from an older commit in a
// git worktree: the builds run in turns, ROUNDS times each, so they are compared in one run.
// Environment: ROUNDS (3), RESTARTS (8 per round), WRITERS (16), GAP: 'refuse' (while Redis is
// down its port refuses connections, as on one host) or 'stall' (default: the port takes a
// connection and says nothing until Redis is back, as a reconnection does that stalls on DNS
// or on a container's network while it restarts). Needs redis-server on PATH.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The toy API's own Redis client (the root package does not depend on it).
const { Redis } = createRequire(new URL('../apps/toy-api/package.json', import.meta.url))('ioredis');

const { env } = process;
const ROUNDS = Number(env.ROUNDS ?? 3);
const RESTARTS = Number(env.RESTARTS ?? 8);
const WRITERS = Number(env.WRITERS ?? 16);
const GAP = env.GAP ?? 'stall';
const KEY_DEADLINE_MS = 30_000;
const dists = process.argv.slice(2).length
  ? process.argv.slice(2)
  : [new URL('../apps/toy-api/dist', import.meta.url).pathname];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** redis-server with AOF (fsync every second) in `dir`; resolves once it answers PING. */
async function startRedis(port, dir) {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
    ],
    { stdio: 'ignore' },
  );
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  for (let i = 0; i < 200; i++) {
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') break;
    } catch {}
    probe.disconnect();
    await sleep(25);
  }
  probe.disconnect();
  return child;
}

async function stopRedis(child) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Takes connections on the port and never answers; close() lets them go and frees the port. */
async function silentListener(port) {
  const sockets = new Set();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return {
    close: () =>
      new Promise((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(r);
      }),
  };
}

async function startApi(dist, redisPort) {
  const apiKey = randomBytes(12).toString('hex');
  const child = spawn(process.execPath, [join(resolve(dist), 'main.js')], {
    env: { PATH: process.env.PATH, TOY_API_KEY: apiKey, PORT: '0', REDIS_URL: `redis://127.0.0.1:${redisPort}` },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('the toy API did not start within 15 s')), 15_000);
    let seen = '';
    child.stdout.on('data', (chunk) => {
      if (seen === undefined) return; // read on, so the pipe never fills
      seen += chunk;
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (listening) {
        clearTimeout(timer);
        seen = undefined;
        resolveUrl(listening[1]);
      }
    });
  });
  return { child, url, apiKey };
}

/** One reply per key, retried with the same key until an answer that is not "try again". */
async function writer(api, w, state) {
  for (let n = 0; state.running; n++) {
    const key = `w${w}-${n}-${randomUUID().slice(0, 8)}`;
    const body = `reply ${key}`;
    const until = Date.now() + KEY_DEADLINE_MS;
    state.asked.push(key);
    while (Date.now() < until) {
      let status = 0;
      try {
        const response = await fetch(`${api.url}/emails/m-000${(w % 9) + 1}/reply`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${api.apiKey}`,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          body: JSON.stringify({ body }),
          signal: AbortSignal.timeout(10_000),
        });
        status = response.status;
        await response.arrayBuffer();
      } catch {}
      if (status === 201) break;
      if (status !== 0 && status < 500 && status !== 409) break;
      state.retries++;
      await sleep(50);
    }
  }
}

async function oneRun(dist) {
  const dir = mkdtempSync(join(tmpdir(), 'redis-restarts-'));
  const redisPort = await freePort();
  let redis = await startRedis(redisPort, dir);
  const api = await startApi(dist, redisPort);
  const state = { running: true, asked: [], retries: 0 };
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(api, w, state));
  for (let r = 0; r < RESTARTS; r++) {
    await sleep(400 + Math.random() * 400);
    await stopRedis(redis);
    const stall = GAP === 'stall' ? await silentListener(redisPort) : undefined;
    await sleep(300);
    await stall?.close();
    redis = await startRedis(redisPort, dir);
  }
  await sleep(1000);
  state.running = false;
  await Promise.all(writers);

  const client = new Redis(redisPort, '127.0.0.1');
  const copies = new Map();
  for (let e = 1; e <= 9; e++) {
    for (const line of await client.lrange(`toy-api:replies:m-000${e}`, 0, -1)) {
      const reply = JSON.parse(line);
      const key = reply.body.slice('reply '.length);
      copies.set(key, [...(copies.get(key) ?? []), reply.id]);
    }
  }
  client.disconnect();
  api.child.kill('SIGKILL');
  await stopRedis(redis);
  rmSync(dir, { recursive: true, force: true });
  const twice = [...copies].filter(([, ids]) => ids.length > 1);
  return {
    asked: state.asked.length,
    stored: copies.size,
    retries: state.retries,
    twiceSameId: twice.filter(([, ids]) => new Set(ids).size === 1).length,
    twiceNewId: twice.filter(([, ids]) => new Set(ids).size > 1).length,
    examples: twice.slice(0, 2).map(([key, ids]) => `${key}: ${ids.join(', ')}`),
  };
}

const totals = new Map(dists.map((d) => [d, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const dist of round % 2 ? dists : [...dists].reverse()) {
    const result = await oneRun(dist);
    totals.get(dist).push(result);
    console.log(
      `round ${round} ${dist}: ${result.asked} keys, ${result.retries} retried attempts, ` +
        `${result.twiceSameId + result.twiceNewId} stored more than once (${result.twiceSameId} one id repeated, ${result.twiceNewId} the handler ran again)` +
        `${result.examples.length ? `; e.g. ${result.examples.join('; ')}` : ''}`,
    );
  }
}
console.log(`\n${ROUNDS} rounds of ${RESTARTS} Redis restarts under ${WRITERS} writers each:`);
for (const [dist, results] of totals) {
  const sum = (f) => results.reduce((n, r) => n + r[f], 0);
  console.log(
    `  ${dist}: ${sum('asked')} keys, ${sum('twiceSameId') + sum('twiceNewId')} stored more than once (${sum('twiceSameId')} one id, ${sum('twiceNewId')} two ids)`,
  );
}
