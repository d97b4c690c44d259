// The session store's cost per request, two builds of this repository side by side in one run
// (say, before and after a change): each build's RedisSessionStore (and MemorySessionStore, for
// scale) against one Redis, a session looked up (get, which keeps it alive) and a session opened
// and ended (create + delete), in turns, round after round. A row is the median µs per
// operation over the rounds, and after/before the median of each round's own ratio.
// Usage: REDIS_URL=redis://127.0.0.1:6379 node bench/session-store.mjs BEFORE_REPO_DIR AFTER_REPO_DIR [--rounds 12] [--ops 2000]
//   Both built (pnpm build). Run it A/A (one build against itself) to see the spread a change must beat.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './lib/util.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '12' }, ops: { type: 'string', default: '2000' } },
});
const usage = 'usage: REDIS_URL=... node bench/session-store.mjs BEFORE_REPO_DIR AFTER_REPO_DIR [--rounds N] [--ops N]';
const ROUNDS = Number(values.rounds);
const OPS = Number(values.ops);
if (positionals.length !== 2 || !process.env.REDIS_URL) {
  console.error(`${usage}: two built repository directories, and REDIS_URL`);
  process.exit(2);
}
if (!Number.isInteger(ROUNDS) || ROUNDS < 2 || !Number.isInteger(OPS) || OPS < 10) {
  console.error(`${usage}: --rounds a whole number from 2, --ops from 10`);
  process.exit(2);
}

/** One build's stores, on a prefix of their own; an owned session, as an OAuth gateway makes. */
async function build(name, dir) {
  const gateway = join(dir, 'apps/mcp-gateway');
  const { Redis } = createRequire(join(gateway, 'package.json'))('ioredis');
  const load = (file) => import(pathToFileURL(join(gateway, 'dist/sessions', file)).href);
  const { RedisSessionStore } = await load('redis-session-store.js');
  const { MemorySessionStore } = await load('memory-session-store.js');
  const redis = new RedisSessionStore({
    redis: new Redis(process.env.REDIS_URL),
    prefix: `bench-${name}-${process.pid}:`,
    quitOnClose: true,
    maxSessions: 1_000_000,
  });
  const memory = new MemorySessionStore({ maxSessions: 1_000_000 });
  const state = { protocolVersion: '2025-11-25', initialized: true, owner: 'bench-user' };
  return {
    name,
    stores: { redis, memory },
    state,
    ids: { redis: await redis.create(state), memory: await memory.create(state) },
  };
}

/** µs per operation over `OPS` of them, one after another (as one client's requests are). */
async function time(run) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) await run();
  return Number(process.hrtime.bigint() - started) / 1000 / OPS;
}

const sides = [await build('before', positionals[0]), await build('after', positionals[1])];
const rows = [
  ['redis', 'get', (b) => () => b.stores.redis.get(b.ids.redis)],
  // The state given to delete, as the transport does (it has just read the session).
  ['redis', 'create + delete', (b) => async () => b.stores.redis.delete(await b.stores.redis.create(b.state), b.state)],
  ['memory', 'get', (b) => () => b.stores.memory.get(b.ids.memory)],
  [
    'memory',
    'create + delete',
    (b) => async () => b.stores.memory.delete(await b.stores.memory.create(b.state), b.state),
  ],
];
const results = rows.map(() => ({ before: [], after: [], ratios: [] }));
for (let round = 0; round <= ROUNDS; round++) {
  for (const [i, [, , op]] of rows.entries()) {
    // In turns: the side that goes first changes every round. Round 0 warms up and is not kept.
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    const took = {};
    for (const side of order) took[side.name] = await time(op(side));
    if (round === 0) continue;
    results[i].before.push(took.before);
    results[i].after.push(took.after);
    results[i].ratios.push(took.after / took.before);
  }
}
console.log(
  `session store, µs per operation (median of ${ROUNDS} rounds of ${OPS}; after/before: median [min, max] of the rounds' ratios)`,
);
console.log('| store | operation | before µs | after µs | after/before |');
console.log('|---|---|---|---|---|');
for (const [i, [store, operation]] of rows.entries()) {
  const r = results[i];
  const ratio = `${median(r.ratios).toFixed(3)}x [${Math.min(...r.ratios).toFixed(2)}, ${Math.max(...r.ratios).toFixed(2)}]`;
  console.log(
    `| ${store} | ${operation} | ${median(r.before).toFixed(1)} | ${median(r.after).toFixed(1)} | ${ratio} |`,
  );
}
for (const side of sides) await Promise.all([side.stores.redis.close(), side.stores.memory.close()]);
