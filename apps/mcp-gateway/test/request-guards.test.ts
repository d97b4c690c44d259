// The guards in front of every HTTP request, one by one: Host against DNS rebinding, Origin
// against pages from other sites, the bearer token. Tricks that only look like an allowed
// value (a prefix, `null`, another port's host) must not pass.
import { describe, expect, it } from 'vitest';
import {
  allowedHosts,
  allowedOrigins,
  bearerMatches,
  guardsFor,
  hostOf,
  isOriginAllowed,
  refusalOf,
  tokenBytes,
} from '../src/transports/http/request-guards.js';

describe('the Host guard', () => {
  const hosts = allowedHosts('127.0.0.1', ['mcp-gateway']);

  it('takes loopback names, the bound address and the extra hosts, with any port and any case', () => {
    for (const header of [
      'localhost',
      'LOCALHOST:8090',
      '127.0.0.1:1',
      '[::1]:8090',
      'mcp-gateway',
      'MCP-Gateway:80',
    ]) {
      expect(hosts.has(hostOf(header)), header).toBe(true);
    }
  });

  it('refuses names that merely start or end like an allowed one, and a missing Host', () => {
    for (const header of [
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      'evil.localhost.example:8090',
      'mcp-gateway.evil.example',
      '127.0.0.2',
      '',
      undefined,
    ]) {
      expect(hosts.has(hostOf(header)), String(header)).toBe(false);
    }
  });

  it('does not add a wildcard bind address to the allowed hosts', () => {
    expect(allowedHosts('0.0.0.0').has('0.0.0.0')).toBe(false);
    expect(allowedHosts('::').has('::')).toBe(false);
    expect(allowedHosts('10.0.0.5').has('10.0.0.5')).toBe(true);
  });

  it('allows exactly the loopback names, the bound address and the extra hosts, nothing else', () => {
    const loopback = ['localhost', '127.0.0.1', '[::1]', '::1'];
    expect([...allowedHosts('0.0.0.0')].sort()).toEqual([...loopback].sort());
    expect([...allowedHosts('::')].sort()).toEqual([...loopback].sort());
    expect([...allowedHosts('127.0.0.1')].sort()).toEqual([...loopback].sort());
    expect([...allowedHosts('10.0.0.5', ['GW.Example'])].sort()).toEqual(
      [...loopback, '10.0.0.5', 'gw.example'].sort(),
    );
    // A request without a Host names no host at all.
    expect(hostOf(undefined)).toBe('');
  });
});

describe('the Origin guard', () => {
  const origins = allowedOrigins(['https://app.example/', 'https://Tools.Example']);

  it('lets a request without an Origin through: it does not come from a browser page', () => {
    expect(isOriginAllowed(undefined, origins)).toBe(true);
  });

  it('takes loopback origins and the allowed ones exactly, without case', () => {
    for (const origin of [
      'http://localhost:5173',
      'http://127.0.0.1',
      'http://[::1]:3000',
      'https://app.example',
      'https://tools.example',
    ]) {
      expect(isOriginAllowed(origin, origins), origin).toBe(true);
    }
  });

  it('refuses null, prefixes and look-alikes of allowed origins', () => {
    for (const origin of [
      'null',
      'http://localhost.evil.example',
      'http://127.0.0.1.nip.io',
      'https://app.example.evil.example',
      'https://app.example:8443',
      'http://app.example',
      'not a url',
      '',
    ]) {
      expect(isOriginAllowed(origin, origins), origin).toBe(false);
    }
  });
});

describe('the token guard', () => {
  const token = tokenBytes('s3cret-token');

  it('takes the token as a bearer credential, the scheme in any case', () => {
    expect(bearerMatches('Bearer s3cret-token', token)).toBe(true);
    expect(bearerMatches('bearer   s3cret-token', token)).toBe(true);
  });

  it('refuses a missing, wrong, longer, shorter or differently sent token', () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer s3cret-tokeN',
      'Bearer s3cret-token2',
      'Bearer s3cret-toke',
      'Bearer s3cret-tokeñ',
      'Basic s3cret-token',
      's3cret-token',
      'Bearer s3cret-token extra',
      'xBearer s3cret-token',
      'Token Bearer s3cret-token',
    ]) {
      expect(bearerMatches(header, token), String(header)).toBe(false);
    }
  });
});

describe('refusalOf: the one decision, in order', () => {
  const guards = guardsFor({ host: '127.0.0.1', allowedOrigins: ['https://app.example'], token: 'secret-token' });
  const good = {
    url: '/mcp',
    host: '127.0.0.1:8090',
    origin: undefined,
    authorization: 'Bearer secret-token',
  };

  it('lets a request with an allowed Host, no Origin and the token pass', () => {
    expect(refusalOf(guards, good)).toBeUndefined();
    expect(refusalOf(guards, { ...good, origin: 'https://app.example' })).toBeUndefined();
  });

  it('answers each refusal with its status, its message and, for the token, the challenge', () => {
    expect(refusalOf(guards, { ...good, host: undefined })).toEqual({
      status: 400,
      message: 'Bad Request: a Host header is required',
    });
    expect(refusalOf(guards, { ...good, host: 'evil.example:8090' })).toEqual({
      status: 403,
      message: "Forbidden: Host 'evil.example' is not allowed",
    });
    expect(refusalOf(guards, { ...good, origin: `https://evil.example/${'x'.repeat(200)}` })).toEqual({
      status: 403,
      // The Origin quoted cut to its first 100 characters (21 of them before the x's).
      message: `Forbidden: Origin 'https://evil.example/${'x'.repeat(79)}' is not allowed`,
    });
    expect(refusalOf(guards, { ...good, authorization: 'Bearer wrong' })).toEqual({
      status: 401,
      message: 'Unauthorized: send the gateway token as "Authorization: Bearer <token>"',
      headers: { 'www-authenticate': 'Bearer realm="mcp-gateway"' },
    });
  });

  it('checks Host and Origin before the token, and /health needs no token', () => {
    expect(refusalOf(guards, { ...good, host: 'evil.example', authorization: undefined })?.status).toBe(403);
    expect(refusalOf(guards, { ...good, origin: 'null', authorization: undefined })?.status).toBe(403);
    expect(refusalOf(guards, { ...good, url: '/health', authorization: undefined })).toBeUndefined();
    expect(refusalOf(guards, { ...good, url: '/health', host: 'evil.example' })?.status).toBe(403);
    expect(refusalOf(guards, { ...good, url: '/mcp', authorization: undefined })?.status).toBe(401);
  });

  it('asks for no token when the gateway has none', () => {
    const open = guardsFor({ host: '127.0.0.1', allowedOrigins: [], token: undefined });
    expect(refusalOf(open, { ...good, authorization: undefined })).toBeUndefined();
  });
});
