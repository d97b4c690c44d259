export { type DemoSignIn, type DemoTokens, signInDemoUser } from './demo-sign-in.js';
export { generateKeys, type KeyFile, loadOrCreateKeys, retireKeys, rotateKeys } from './keys.js';
export { canonical } from './provider.js';
export { type RedisAdapter, redisAdapter } from './redis-adapter.js';
export {
  AGENT_CLIENT,
  type AuthServer,
  type AuthServerOptions,
  defaultClients,
  GATEWAY_CLIENT_ID,
  SCRIPT_CLIENT_ID,
  startAuthServer,
} from './server.js';
export { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE } from './token-exchange.js';
export { type DemoUser, SCOPES, USERS } from './users.js';
