// oidc-provider's storage in Redis (REDIS_URL), so that grants, codes, refresh tokens and
// sign-in sessions outlive a restart and are shared by replicas. The adapter interface is the
// library's; each model is a JSON value with the model's own expiry, and the entities of one
// grant are also listed under the grant, so that revoking it removes them all.
import { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

// Models whose entities belong to a grant (revoked with it).
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

export interface RedisAdapter {
  /** The class oidc-provider constructs per model. */
  Adapter: new (
    model: string,
  ) => Adapter;
  /** Closes the connection. */
  close(): Promise<void>;
}

/** REDIS_PASSWORD is sent with AUTH, never part of the URL. */
export function redisAdapter(
  url: string,
  options: { password?: string | undefined; prefix?: string | undefined; onError?: (error: Error) => void } = {},
): RedisAdapter {
  const client = new Redis(url, {
    keyPrefix: options.prefix ?? 'auth-server:',
    maxRetriesPerRequest: 2,
    ...(options.password ? { password: options.password } : {}),
  });
  // ioredis reconnects by itself; what went wrong is said once per error, not thrown.
  client.on('error', (error: Error) => options.onError?.(error));
  const grantKey = (id: string) => `grant:${id}`;
  const uidKey = (uid: string) => `uid:${uid}`;
  const userCodeKey = (code: string) => `userCode:${code}`;

  const Adapter = class RedisModelAdapter implements Adapter {
    constructor(private readonly model: string) {}

    #key(id: string) {
      return `${this.model}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const key = this.#key(id);
      const multi = client.multi();
      const set = (k: string, value: string) =>
        expiresIn ? multi.set(k, value, 'EX', expiresIn) : multi.set(k, value);
      set(key, JSON.stringify(payload));
      if (GRANTABLE.has(this.model) && payload.grantId) {
        multi.rpush(grantKey(payload.grantId), key);
        if (expiresIn) multi.expire(grantKey(payload.grantId), expiresIn, 'GT');
      }
      if (payload.userCode) set(userCodeKey(payload.userCode), id);
      if (payload.uid) set(uidKey(payload.uid), id);
      await multi.exec();
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const text = await client.get(this.#key(id));
      return text ? (JSON.parse(text) as AdapterPayload) : undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const id = await client.get(uidKey(uid));
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const id = await client.get(userCodeKey(userCode));
      return id ? this.find(id) : undefined;
    }

    async destroy(id: string): Promise<void> {
      await client.del(this.#key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const keys = await client.lrange(grantKey(grantId), 0, -1);
      // keyPrefix applies to del's arguments, and the list holds unprefixed keys.
      if (keys.length > 0) await client.del(...keys);
      await client.del(grantKey(grantId));
    }

    async consume(id: string): Promise<void> {
      const text = await client.get(this.#key(id));
      if (!text) return;
      const payload = JSON.parse(text) as AdapterPayload;
      payload.consumed = Math.floor(Date.now() / 1000);
      await client.set(this.#key(id), JSON.stringify(payload), 'KEEPTTL');
    }
  };
  return {
    Adapter,
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
