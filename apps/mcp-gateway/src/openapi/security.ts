// How the upstream key is sent for an operation, from its security requirements (or the
// document's): a bearer token, HTTP Basic (the key is `user:password`), or an API key in a
// header or the query. An operation that needs something else (mutual TLS, a cookie, digest)
// cannot be called and is reported.

import type { UpstreamAuth } from '../tools/tool.js';
import { deref, SpecError } from './json-schema.js';

export function securityFor(document: Record<string, unknown>, operation: Record<string, unknown>): UpstreamAuth[] {
  const requirements = (operation.security ?? document.security ?? []) as Array<Record<string, unknown>>;
  if (requirements.length === 0) return [];
  const schemes = ((document.components as Record<string, unknown> | undefined)?.securitySchemes ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const unsupported: string[] = [];
  for (const requirement of requirements) {
    const names = Object.keys(requirement);
    if (names.length === 0) return [];
    const applied: UpstreamAuth[] = [];
    for (const name of names) {
      const scheme = deref(document, schemes[name]);
      if (!scheme) {
        unsupported.push(`${name} (not in components.securitySchemes)`);
        break;
      }
      if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer') applied.push({ type: 'bearer' });
      else if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'basic')
        applied.push({ type: 'basic' });
      else if (scheme.type === 'oauth2' || scheme.type === 'openIdConnect') applied.push({ type: 'bearer' });
      else if (scheme.type === 'apiKey' && scheme.in === 'header')
        applied.push({ type: 'header', name: String(scheme.name) });
      else if (scheme.type === 'apiKey' && scheme.in === 'query')
        applied.push({ type: 'query', name: String(scheme.name) });
      else {
        unsupported.push(`${name} (${String(scheme.type)}${scheme.scheme ? ` ${String(scheme.scheme)}` : ''})`);
        break;
      }
    }
    if (applied.length === names.length) return applied;
  }
  throw new SpecError(
    `no supported security scheme: ${unsupported.join(', ')}; supported are http bearer and basic, oauth2, openIdConnect, apiKey in header or query`,
  );
}

/**
 * The OAuth scopes an operation declares: those of its first requirement that names an oauth2
 * or openIdConnect scheme (alternatives such as an API key declare none).
 */
export function scopesFor(document: Record<string, unknown>, operation: Record<string, unknown>): string[] {
  const requirements = (operation.security ?? document.security ?? []) as Array<Record<string, unknown>>;
  const schemes = ((document.components as Record<string, unknown> | undefined)?.securitySchemes ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  for (const requirement of Array.isArray(requirements) ? requirements : []) {
    for (const [name, scopes] of Object.entries(requirement ?? {})) {
      const type = deref(document, schemes[name])?.type;
      if ((type === 'oauth2' || type === 'openIdConnect') && Array.isArray(scopes)) {
        return scopes.filter((s): s is string => typeof s === 'string');
      }
    }
  }
  return [];
}
