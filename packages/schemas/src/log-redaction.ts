// What never appears in a log line of the toy API or the gateway: the credentials a request
// carries, and the session id that stands for one. One list, given to pino by both servers.
export const LOG_REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers["mcp-session-id"]',
];

/** The levels LOG_LEVEL takes (pino's), `silent` turning logs off. */
export const LOG_LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** LOG_LEVEL as given (unset means `info`), or a message that names what is allowed. */
export function readLogLevel(value: string | undefined): { level: string } | { problem: string } {
  const level = value || 'info';
  return LOG_LEVELS.includes(level)
    ? { level }
    : { problem: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got '${level.slice(0, 40)}'` };
}
