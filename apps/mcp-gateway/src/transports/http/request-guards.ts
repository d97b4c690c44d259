// The checks in front of every HTTP request, as plain functions: the Host header against DNS
// rebinding, the Origin header against pages from other sites, and the bearer token. The
// transport's onRequest hook calls them in that order; each is tested on its own.
import { createHash, timingSafeEqual } from 'node:crypto';

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

/** The token as the guard keeps it: a digest, so that the comparison takes the same time for any input. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Whether an Authorization header carries the token as `Bearer <token>`, compared in constant time. */
export function bearerMatches(authorization: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(tokenDigest(match[1] ?? ''), expected);
}
