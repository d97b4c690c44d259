// One setting's text read as a value: a whole number in a range, on or off, an http(s) URL, or
// one of the gateway's named choices. A value that is none of these is a ConfigError naming the
// variable, what it got, and what is allowed.
import { isIP } from 'node:net';
import { readInteger, readLogLevel } from '@agentwire/schemas/settings';
import { ConfigError } from './common/config-error.js';
import type { UpstreamAuth, UpstreamReportMode } from './tools/tool.js';

export function integerOf(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  const read = readInteger(name, value, fallback, min, max);
  if ('problem' in read) throw new ConfigError(read.problem);
  return read.value;
}

export function httpUrlOf(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got '${value.slice(0, 200)}'`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got '${value.slice(0, 200)}'`);
  }
  if (url.username || url.password) throw new ConfigError(`${name} must not carry credentials`);
  return url;
}

export function quotaPerOf(value: string | undefined): 'upstream' | 'tool' {
  const per = value || 'upstream';
  if (per !== 'upstream' && per !== 'tool')
    throw new ConfigError(`QUOTA_PER must be upstream or tool, got '${per.slice(0, 40)}'`);
  return per;
}

/** `spec` (the default: the document's security schemes), `bearer`, `basic`, `header:<Name>` or `query:<name>`. */
export function upstreamAuthOf(value: string | undefined): UpstreamAuth | undefined {
  if (value === undefined || value === '' || value === 'spec') return undefined;
  if (value === 'bearer') return { type: 'bearer' };
  if (value === 'basic') return { type: 'basic' };
  const match = /^(header|query):([!#$%&'*+.^_`|~0-9A-Za-z-]+)$/.exec(value);
  if (match) return { type: match[1] as 'header' | 'query', name: match[2] as string };
  throw new ConfigError(
    `UPSTREAM_AUTH must be spec, bearer, basic, header:<Name> or query:<name> (e.g. header:X-Api-Key), got '${value}'`,
  );
}

export function onOff(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new ConfigError(`${name} must be on or off, got '${value}'`);
}

export function upstreamReportOf(value: string | undefined): UpstreamReportMode {
  if (value === undefined || value === '') return 'on-request';
  if (value === 'on-request' || value === 'always') return value;
  throw new ConfigError(`UPSTREAM_REPORT must be on-request or always, got '${value}'`);
}

export function outputSchemasOf(value: string | undefined): boolean | 'unlisted' {
  if (value === undefined || value === '' || value === 'on') return true;
  if (value === 'off') return false;
  if (value === 'unlisted') return 'unlisted';
  throw new ConfigError(`OUTPUT_SCHEMAS must be on, off or unlisted, got '${value}'`);
}

export function pageSizeOf(value: string | undefined): number {
  const n = Number(value ?? 100);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new ConfigError(`TOOLS_PAGE_SIZE must be an integer from 1 to 1000, got '${value}'`);
  return n;
}

export function logLevelOf(value: string | undefined): string {
  const read = readLogLevel(value);
  if ('problem' in read) throw new ConfigError(read.problem);
  return read.level;
}

/** The names proxy-addr (Fastify's trustProxy) gives address ranges. */
const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUSTED_PROXIES: a comma list of IP addresses, CIDRs (`10.0.0.0/8`, `fd00::/8`) and
 * `loopback`, `linklocal`, `uniquelocal`. Checked here, where a bad entry names the variable;
 * Fastify's own check came later, as a stack trace.
 */
export function trustedProxiesOf(value: string | undefined): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (PROXY_RANGES.has(entry)) continue;
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk =
      prefix === undefined ||
      (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits) ||
      (family === 4 && isIP(prefix) === 4);
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError(
        `TRUSTED_PROXIES: '${entry.slice(0, 80)}' is not an IP address, a CIDR (10.0.0.0/8, fd00::/8; a prefix of at most 32 bits for IPv4, 128 for IPv6) or one of loopback, linklocal, uniquelocal`,
      );
    }
  }
  return entries;
}
