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

/**
 * Query parameters that carry a credential: their values never reach a log line. `code` and
 * `state`: an authorization code and its state, on the way back from a sign-in (the gateway's
 * /connect/... pages).
 */
export const CREDENTIAL_QUERY_PARAMS: readonly string[] = [
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'api_key',
  'code',
  'state',
];

/**
 * A request URL as a log may show it: the value of every credential parameter replaced. A token
 * sent in the query string is refused (OAuth 2.1 drops that method), but the request is still
 * logged, and its URL must not carry the token into the log.
 */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const pattern = new RegExp(`([?&](?:${CREDENTIAL_QUERY_PARAMS.join('|')})=)[^&#]*`, 'gi');
  return url.replace(pattern, '$1[Redacted]');
}

/** Fastify's request serializer, with the URL's credentials redacted (both servers use it). */
export function redactedRequest(request: {
  method: string;
  url: string;
  host?: string;
  hostname?: string;
  ip?: string;
  socket?: { remotePort?: number } | null;
}): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host ?? request.hostname,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
