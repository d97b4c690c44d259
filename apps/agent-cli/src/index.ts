// @agentwire/agent-cli as a library: the triage task and its backends.
// Any new export added here becomes public API.
export { EXIT } from './exit-codes.js';
export type { TriageBackend } from './triage/backend.js';
export { runTriage, type TriageOutcome } from './triage/task.js';
