import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/index.js';

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
    });
  });

  it('says what is wrong with each bad setting', () => {
    const key = 'k'.repeat(16);
    expect(() => readConfig({})).toThrow(/TOY_API_KEY is not set/);
    expect(() => readConfig({ TOY_API_KEY: 'short' })).toThrow(/at least 8 characters/);
    expect(() => readConfig({ TOY_API_KEY: key, LOG_LEVEL: 'loud' })).toThrow(
      "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got 'loud'",
    );
    expect(() => readConfig({ TOY_API_KEY: key, PORT: 'http' })).toThrow(
      "PORT must be an integer from 0 to 65535, got 'http'",
    );
    expect(() => readConfig({ TOY_API_KEY: key, TOY_API_ADMIN: 'yes' })).toThrow(/TOY_API_ADMIN must be 1 or 0/);
    expect(() => readConfig({ TOY_API_KEY: key, TOY_API_READONLY_KEY: key })).toThrow(/must differ/);
  });
});
