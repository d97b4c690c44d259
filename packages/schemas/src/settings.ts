// @agentwire/schemas/settings: what reading a server's settings needs (log levels, the log
// redaction list, checks on secrets), without the TypeBox schemas of the main entry, whose
// loading costs about a quarter of a second: a command that only reads its settings starts
// faster without them.
export { readInteger } from './integer-setting.js';
export { LOG_LEVELS, LOG_REDACT_PATHS, readLogLevel, redactedRequest, redactUrl } from './log-redaction.js';
export { secretProblem } from './secrets.js';
