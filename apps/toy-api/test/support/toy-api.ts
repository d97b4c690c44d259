// Starts real toy API servers on loopback (port 0) for tests, with either store, and closes
// everything they opened afterwards.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach } from 'vitest';
import { type App, buildApp, type ToyApiOptions } from '../../src/index.js';

export const STORES = ['memory', 'redis'] as const;
export type StoreKind = (typeof STORES)[number];

export interface RunningApi {
  url: string;
  key: string;
  readKey: string;
  app: App;
  /** Fetch with the full key. */
  call(path: string, init?: RequestInit): Promise<Response>;
  /** Fetch with the full key, JSON body, JSON answer. */
  json(
    path: string,
    init?: { method?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any }>;
}

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A Redis key prefix shared by replicas of one test, and unique to it. */
export function testPrefix(): string {
  return `test:${randomUUID()}:`;
}

export async function startApi(
  store: StoreKind,
  options: Partial<ToyApiOptions> & { sharedPrefix?: string } = {},
): Promise<RunningApi> {
  const key = options.apiKey ?? `full-${randomBytes(12).toString('hex')}`;
  const readKey = options.readOnlyKey ?? `read-${randomBytes(12).toString('hex')}`;
  let redis: Redis | undefined;
  const prefix = options.sharedPrefix ?? testPrefix();
  if (store === 'redis') {
    const url = process.env.REDIS_URL;
    if (!url) throw new Error('REDIS_URL is not set; the global setup should have started Redis');
    redis = new Redis(url, { maxRetriesPerRequest: 1 });
    const client = redis;
    cleanups.push(async () => {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      await client.quit();
    });
  }
  const app = await buildApp({
    admin: true,
    ...options,
    apiKey: key,
    readOnlyKey: readKey,
    redis,
    redisPrefix: prefix,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const address = app.server.address();
  if (typeof address !== 'object' || !address) throw new Error('server has no address');
  const url = `http://127.0.0.1:${address.port}`;

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
    });

  const json: RunningApi['json'] = async (path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await call(path, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };

  return { url, key, readKey, app, call, json };
}

/** Installs fault rules through the admin endpoint, as a user of the API would. */
export async function setFaults(api: RunningApi, config: unknown): Promise<void> {
  const result = await api.json('/admin/faults', { method: 'PUT', body: config });
  if (result.status !== 200) throw new Error(`setting faults failed: ${JSON.stringify(result.body)}`);
}
