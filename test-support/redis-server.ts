// Vitest global set-up for the suites that need Redis (the toy API's stores, the gateway's
// sessions). `pnpm test` provides one before any suite starts and passes it in REDIS_URL; a suite
// run on its own (`pnpm --filter @agentwire/toy-api test`) starts its own here, the same way:
// a Redis container when a Docker engine answers, else a redis-server process.
import {
  dockerAnswers,
  PrerequisiteError,
  type RunningRedis,
  startRedisContainer,
  startRedisProcess,
  which,
} from './prerequisites.mjs';

export { startRedis } from './prerequisites.mjs';

let stop: (() => Promise<void>) | undefined;

export async function setup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  let redis: RunningRedis | undefined;
  if (await dockerAnswers()) redis = await startRedisContainer().catch(() => undefined);
  if (!redis && which('redis-server')) redis = await startRedisProcess();
  if (!redis) {
    throw new PrerequisiteError(
      'The tests need Redis: set REDIS_URL, start a Docker engine, or install redis-server; `pnpm test` from the repository root finds or installs one and says what is missing.',
    );
  }
  stop = redis.stop;
  process.env.REDIS_URL = redis.url;
}

export async function teardown(): Promise<void> {
  await stop?.();
  stop = undefined;
}
