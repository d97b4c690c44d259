// @agentwire/toy-api as a library: build the app in-process (tests, the agent's embedded stack).
// Any new export added here becomes public API.

export { buildApp, type ToyApiOptions } from './app.js';
export { ConfigError, readConfig, type ToyApiConfig } from './config.js';
export { EMAIL_DATES, EMAILS, EMPLOYEES } from './data/company.js';
export { EnvelopeError } from './envelope-error.js';
export type { FaultState } from './faults.js';
export type { App } from './route-context.js';
