import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/index.js';

/** The settings of .env.example, as a user who copies it unchanged would start with. */
const example = parseEnv(readFileSync(new URL('../../../.env.example', import.meta.url), 'utf8'));

describe('readConfig', () => {
  it('uses 127.0.0.1:8080, memory and no admin by default', () => {
    expect(readConfig({ TOY_API_KEY: 'k'.repeat(16) })).toEqual({
      apiKey: 'k'.repeat(16),
      readOnlyKey: undefined,
      host: '127.0.0.1',
      port: 8080,
      redisUrl: undefined,
      redisPrefix: 'toy-api:',
      admin: false,
      logLevel: 'info',
      maxNotes: 10_000,
      maxRepliesPerEmail: 1_000,
      maxConnections: 1_000,
      idempotencyLeaseMs: 10_000,
      shutdownGraceMs: 25_000,
    });
  });

  it('says what is wrong with each bad setting', () => {
    const key = 'k'.repeat(16);
    expect(() => readConfig({})).toThrow(/TOY_API_KEY is not set/);
    expect(() => readConfig({ TOY_API_KEY: 'short' })).toThrow(/at least 8 characters/);
    expect(() => readConfig({ TOY_API_KEY: key, LOG_LEVEL: 'loud' })).toThrow(
      "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got 'loud'",
    );
    expect(() => readConfig({ TOY_API_KEY: key, TOY_API_MAX_NOTES: '0' })).toThrow(
      "TOY_API_MAX_NOTES must be an integer from 1 to 10000000, got '0'",
    );
    expect(() => readConfig({ TOY_API_KEY: key, TOY_API_MAX_REPLIES_PER_EMAIL: '-1' })).toThrow(
      "TOY_API_MAX_REPLIES_PER_EMAIL must be an integer from 1 to 10000000, got '-1'",
    );
    expect(() => readConfig({ TOY_API_KEY: key, TOY_API_MAX_CONNECTIONS: '1e7' })).toThrow(
      "TOY_API_MAX_CONNECTIONS must be an integer from 1 to 1000000, got '1e7'",
    );
    const set = readConfig({ TOY_API_KEY: key, TOY_API_MAX_REPLIES_PER_EMAIL: '5', TOY_API_MAX_CONNECTIONS: '7' });
    expect([set.maxRepliesPerEmail, set.maxConnections]).toEqual([5, 7]);
    for (const lease of ['299', '600001', '1.5', 'ten']) {
      expect(() => readConfig({ TOY_API_KEY: key, TOY_API_IDEMPOTENCY_LEASE_MS: lease })).toThrow(
        `TOY_API_IDEMPOTENCY_LEASE_MS must be an integer from 300 to 600000 (ms), got '${lease}'`,
      );
    }
    expect(readConfig({ TOY_API_KEY: key, TOY_API_IDEMPOTENCY_LEASE_MS: '300' }).idempotencyLeaseMs).toBe(300);
    for (const grace of ['-1', '3600001', '2.5', 'soon']) {
      expect(() => readConfig({ TOY_API_KEY: key, TOY_API_SHUTDOWN_GRACE_MS: grace })).toThrow(
        `TOY_API_SHUTDOWN_GRACE_MS must be an integer from 0 to 3600000 (ms), got '${grace}'`,
      );
    }
    expect(readConfig({ TOY_API_KEY: key, TOY_API_SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs).toBe(0);
    expect(() => readConfig({ TOY_API_KEY: key, PORT: 'http' })).toThrow(
      "PORT must be an integer from 0 to 65535, got 'http'",
    );
    expect(() => readConfig({ TOY_API_KEY: key, TOY_API_ADMIN: 'yes' })).toThrow(/TOY_API_ADMIN must be 1 or 0/);
    expect(() => readConfig({ TOY_API_KEY: key, TOY_API_READONLY_KEY: key })).toThrow(/must differ/);
  });

  it('refuses the placeholder keys of .env.example, says how to make a real one, and never repeats the value', () => {
    expect(example.TOY_API_KEY).toBeDefined();
    let message = '';
    try {
      readConfig({ TOY_API_KEY: example.TOY_API_KEY });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      "TOY_API_KEY looks like a placeholder (it contains 'change-me'); make one with e.g. TOY_API_KEY=$(openssl rand -hex 24)",
    );
    expect(message).not.toContain(example.TOY_API_KEY);
    expect(() => readConfig({ TOY_API_KEY: 'k'.repeat(16), TOY_API_READONLY_KEY: 'your-read-key' })).toThrow(
      "TOY_API_READONLY_KEY looks like a placeholder (it contains 'your-')",
    );
    expect(example.REDIS_PASSWORD).toBeDefined();
    expect(() => readConfig({ TOY_API_KEY: 'k'.repeat(16), REDIS_PASSWORD: example.REDIS_PASSWORD })).toThrow(
      "REDIS_PASSWORD looks like a placeholder (it contains 'change-me')",
    );
    expect(() => readConfig({ TOY_API_KEY: 'k'.repeat(16), REDIS_PASSWORD: 'short-one' })).toThrow(/REDIS_PASSWORD/);
    expect(readConfig({ TOY_API_KEY: 'k'.repeat(16), REDIS_PASSWORD: 'p'.repeat(16) }).redisPassword).toBe(
      'p'.repeat(16),
    );
  });
});
