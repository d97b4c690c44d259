export { type BearerProblem, type BearerRead, DEFAULT_MAX_TOKEN_BYTES, readBearer } from './bearer.js';
export { type Challenge, wwwAuthenticate } from './challenge.js';
export { type FetchLimits, fetchJsonAnswer } from './fetch-json.js';
export {
  canonicalResource,
  PROTECTED_RESOURCE_WELL_KNOWN,
  type ProtectedResourceMetadata,
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
} from './protected-resource.js';
export {
  type Authentication,
  type Denial,
  insufficientScope,
  missingScopes,
  ResourceServer,
  type ResourceTarget,
} from './resource-server.js';
export {
  ACCESS_TOKEN_TYPE,
  type ExchangedToken,
  TOKEN_EXCHANGE_GRANT,
  TokenExchangeRefusedError,
  TokenExchanger,
  type TokenExchangerOptions,
} from './token-exchanger.js';
export {
  AuthServerUnavailableError,
  DEFAULT_ALGORITHMS,
  type IssuerMetadata,
  type Principal,
  TokenRejectedError,
  TokenVerifier,
  type TokenVerifierOptions,
} from './token-verifier.js';
