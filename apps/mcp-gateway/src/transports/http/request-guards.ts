// The checks in front of every HTTP request, as plain functions: the Host header against DNS
// rebinding, the Origin header against pages from other sites, and the bearer token. One
// function, refusalOf, runs them in that order and decides the refusal (status, message,
// headers); the transport's onRequest hook only sends it. Each check is tested on its own.
import { timingSafeEqual } from 'node:crypto';

/** Names of this machine that a browser cannot be tricked into using for another site. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]', '::1'];

/** The hosts a request may name: loopback, the address we bound (unless a wildcard), and any extra. */
export function allowedHosts(bindHost: string, extra: string[] = []): Set<string> {
  const bound = bindHost === '0.0.0.0' || bindHost === '::' ? [] : [bindHost];
  return new Set([...extra, ...LOOPBACK_HOSTS, ...bound].map((h) => h.toLowerCase()));
}

/** The host a Host header names, lower-cased and without its port. */
export function hostOf(hostHeader: string | undefined): string {
  return (hostHeader ?? '').toLowerCase().replace(/:\d+$/, '');
}

/** Exact origins, compared without case and without a trailing slash. */
export function allowedOrigins(origins: string[]): Set<string> {
  return new Set(origins.map((o) => o.toLowerCase().replace(/\/$/, '')));
}

/**
 * A request without an Origin header is not from a browser page and passes. One with an Origin
 * passes when its host is loopback, or when it is one of the allowed origins exactly: a prefix
 * (`http://localhost.evil.example`) or `null` is not enough.
 */
export function isOriginAllowed(origin: string | undefined, allowed: Set<string>): boolean {
  if (origin === undefined) return true;
  let hostname = '';
  try {
    hostname = new URL(origin).hostname.toLowerCase();
  } catch {
    hostname = '';
  }
  return LOOPBACK_HOSTS.includes(hostname) || allowed.has(origin.toLowerCase());
}

/** The token as the guard keeps it: its bytes. */
export function tokenBytes(token: string): Buffer {
  return Buffer.from(token, 'utf8');
}

/**
 * Whether an Authorization header carries the token as `Bearer <token>`, compared in constant
 * time: a token of the right length byte for byte with timingSafeEqual; one of another length is
 * refused after the same comparison (of the token with itself), so a refusal's timing shows only
 * that the length differs. (Was: SHA-256 of every presented token, 4 µs a request in a profile.)
 */
export function bearerMatches(authorization: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  if (match === null) return false;
  const presented = Buffer.from(match[1] ?? '', 'utf8');
  if (presented.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(presented, expected);
}

/** The guards' settings, prepared once per server. */
export interface Guards {
  hosts: Set<string>;
  origins: Set<string>;
  /** The token's bytes; undefined: no token is asked for. */
  token: Buffer | undefined;
}

export function guardsFor(options: {
  host: string;
  allowedHosts?: string[] | undefined;
  allowedOrigins: string[];
  token: string | undefined;
}): Guards {
  return {
    hosts: allowedHosts(options.host, options.allowedHosts),
    origins: allowedOrigins(options.allowedOrigins),
    token: options.token ? tokenBytes(options.token) : undefined,
  };
}

/** Why a request is refused before it reaches a route, as the answer to send. */
export interface Refusal {
  status: 400 | 401 | 403;
  message: string;
  headers?: Record<string, string>;
}

/**
 * The one decision in front of every route: Host first (DNS rebinding), then Origin (pages of
 * other sites), then the token (every route but /health). Undefined: the request may pass.
 */
export function refusalOf(
  guards: Guards,
  request: { url: string; host: string | undefined; origin: string | undefined; authorization: string | undefined },
): Refusal | undefined {
  if (request.host === undefined) return { status: 400, message: 'Bad Request: a Host header is required' };
  const host = hostOf(request.host);
  if (!guards.hosts.has(host)) return { status: 403, message: `Forbidden: Host '${host}' is not allowed` };
  if (!isOriginAllowed(request.origin, guards.origins)) {
    return { status: 403, message: `Forbidden: Origin '${request.origin?.slice(0, 100)}' is not allowed` };
  }
  if (request.url === '/health') return undefined;
  if (guards.token && !bearerMatches(request.authorization, guards.token)) {
    return {
      status: 401,
      message: 'Unauthorized: send the gateway token as "Authorization: Bearer <token>"',
      headers: { 'www-authenticate': 'Bearer realm="mcp-gateway"' },
    };
  }
  return undefined;
}
