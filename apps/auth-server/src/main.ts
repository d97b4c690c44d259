#!/usr/bin/env node
// The auth-server command: serves the authorization server, or rotates its keys.
//   auth-server               serve (keys made at first start, in AUTH_KEYS_FILE)
//   auth-server rotate-keys   a new signing key first; the old ones keep verifying (restart to use it)
//   auth-server retire-keys   keep only the newest key (after the old tokens have expired)
import { resolve } from 'node:path';
import { ConfigError, readConfig, USAGE } from './config.js';
import { loadOrCreateKeys, retireKeys, rotateKeys } from './keys.js';
import { startAuthServer } from './server.js';

async function main(): Promise<void> {
  const command = process.argv[2];
  if (command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const keysFile = resolve(process.env.AUTH_KEYS_FILE || 'data/auth-keys.json');
  if (command === 'rotate-keys' || command === 'retire-keys') {
    const file = command === 'rotate-keys' ? await rotateKeys(keysFile) : retireKeys(keysFile);
    process.stdout.write(`${keysFile}: ${file.keys.map((k) => k.kid).join(', ')} (the first signs)\n`);
    return;
  }
  if (command !== undefined) throw new ConfigError(`unknown command '${command.slice(0, 40)}'\n${USAGE}`);
  const config = readConfig();
  const keys = await loadOrCreateKeys(keysFile);
  const redis = config.redisUrl
    ? (await import('./redis-adapter.js')).redisAdapter(config.redisUrl, {
        password: config.redisPassword,
        onError: (error) => process.stderr.write(`auth-server: redis: ${error.message}\n`),
      })
    : undefined;
  const server = await startAuthServer({ ...config, keys: keys.keys, adapter: redis?.Adapter });
  process.stderr.write(
    `auth-server: issuer ${server.issuer}; tokens for ${Object.keys(config.resources).join(', ')}; signing key ${keys.keys[0]?.kid}; ${config.redisUrl ? 'grants in Redis' : 'grants in memory'}\n`,
  );
  const stop = () =>
    void server
      .close()
      .then(() => redis?.close())
      .then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`auth-server: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
