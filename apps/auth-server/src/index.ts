export { generateKeys, type KeyFile, loadOrCreateKeys, retireKeys, rotateKeys } from './keys.js';
export { canonical } from './provider.js';
export { type RedisAdapter, redisAdapter } from './redis-adapter.js';
export {
  AGENT_CLIENT,
  type AuthServer,
  type AuthServerOptions,
  defaultClients,
  SCRIPT_CLIENT_ID,
  startAuthServer,
} from './server.js';
export { type DemoUser, SCOPES, USERS } from './users.js';
