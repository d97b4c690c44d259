// The access decision and the forwarding rule on their own: AccessPolicy against callers of
// every kind (signed in, local, none) and rules of every shape, and forwardHeaderProblem's table;
// then forwarded headers through a real gateway core to a real upstream.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/gateway.js';
import type { Caller } from '../src/protocol/messages.js';
import { AccessPolicy, type UpstreamRules } from '../src/tools/access.js';
import { parseSelectors } from '../src/tools/selection.js';
import type { Tool } from '../src/tools/tool.js';
import { forwardHeaderProblem } from '../src/upstream/forward-headers.js';
import { onCleanup } from './support/stack.js';

function tool(name: string, scopes: string[], tags: string[] = [], upstream = 'toy'): Tool {
  return {
    name,
    description: '',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    binding: {
      method: 'GET',
      path: `/${name}`,
      params: [],
      body: undefined,
      output: { kind: 'text' },
      streams: false,
      accept: 'application/json',
      auth: [],
      scopes,
      idempotencyKeyArg: undefined,
      upstream,
    },
    source: { operationId: name, tags },
  };
}

const rule = (name: string, spec: { tools?: string; scopes?: string[]; claims?: Record<string, string[]> }) => ({
  name,
  tools: parseSelectors(spec.tools, name),
  scopes: spec.scopes ?? [],
  claims: spec.claims ?? {},
});

const signedIn = (subject: string, scopes: string[], claims: Record<string, unknown> = {}): Caller => ({
  subject,
  scopes,
  claims: { sub: subject, ...claims },
  token: 't',
});

describe('AccessPolicy', () => {
  it('holds a signed-in caller to the declared scopes, naming the missing ones; local callers and none are not', () => {
    const policy = new AccessPolicy();
    const reply = tool('reply', ['emails:read', 'replies:write']);
    expect(policy.check(reply, signedIn('ben', ['emails:read']))).toEqual({
      ok: false,
      reason: 'it needs the scope replies:write',
      scopes: ['replies:write'],
    });
    expect(policy.check(reply, signedIn('ben', []))).toEqual({
      ok: false,
      reason: 'it needs the scope emails:read replies:write',
      scopes: ['emails:read', 'replies:write'],
    });
    expect(policy.check(reply, signedIn('ada', ['emails:read', 'replies:write']))).toEqual({ ok: true });
    expect(policy.check(reply, { subject: 'me', scopes: [], local: true })).toEqual({ ok: true });
    expect(policy.check(reply, undefined)).toEqual({ ok: true });
    // A local user with LOCAL_SCOPES is held to them like a token.
    expect(policy.check(reply, { subject: 'me', scopes: ['emails:read'] }).ok).toBe(false);
  });

  it('says whether any rule is configured', () => {
    const empty: UpstreamRules = { allow: [], deny: [] };
    expect(new AccessPolicy().hasRules).toBe(false);
    expect(new AccessPolicy(new Map([['a', empty]])).hasRules).toBe(false);
    const oneDeny = { allow: [], deny: [rule('b.deny[0]', {})] };
    const oneAllow = { allow: [rule('c.allow[0]', {})], deny: [] };
    expect(
      new AccessPolicy(
        new Map([
          ['a', empty],
          ['b', oneDeny],
        ]),
      ).hasRules,
    ).toBe(true);
    expect(
      new AccessPolicy(
        new Map([
          ['a', empty],
          ['c', oneAllow],
        ]),
      ).hasRules,
    ).toBe(true);
  });

  it('refuses by a deny rule that covers the tool and matches the caller, by subject, claim or scope', () => {
    const rules: UpstreamRules = {
      allow: [],
      deny: [
        rule('toy.deny[0]', { tools: 'op:list_*,tag:hr', claims: { sub: ['ben', 'eve'] } }),
        rule('toy.deny[1]', { claims: { groups: ['contractors'] } }),
        rule('toy.deny[2]', { tools: 'op:wipe', scopes: ['readonly'] }),
      ],
    };
    const policy = new AccessPolicy(new Map([['toy', rules]]));
    const list = tool('list_people', []);
    const hr = tool('pay', [], ['hr']);
    const other = tool('get_email', []);
    const refusal = { ok: false, reason: 'the rule toy.deny[0] refuses it', scopes: [] };
    expect(policy.check(list, signedIn('ben', []))).toEqual(refusal);
    // One selector of several is enough to cover a tool.
    expect(policy.check(hr, signedIn('eve', []))).toEqual(refusal);
    expect(policy.check(other, signedIn('ben', []))).toEqual({ ok: true });
    expect(policy.check(list, signedIn('ada', []))).toEqual({ ok: true });
    // A rule without tools covers every tool of its upstream; claims may be lists.
    expect(policy.check(other, signedIn('ada', [], { groups: ['staff', 'contractors'] }))).toEqual({
      ok: false,
      reason: 'the rule toy.deny[1] refuses it',
      scopes: [],
    });
    expect(policy.check(other, signedIn('ada', [], { groups: 'contractors' })).ok).toBe(false);
    expect(policy.check(other, signedIn('ada', [], { groups: ['staff'] })).ok).toBe(true);
    expect(policy.check(other, { subject: 'ada', scopes: [], token: 't' }).ok).toBe(true);
    expect(policy.check(tool('wipe', []), signedIn('ada', ['readonly'])).ok).toBe(false);
    expect(policy.check(tool('wipe', []), signedIn('ada', ['other'])).ok).toBe(true);
    // Local users are matched by their subject too; another upstream's tools are not covered.
    expect(policy.check(list, { subject: 'ben', scopes: [], local: true }).ok).toBe(false);
    expect(policy.check(tool('list_people', [], [], 'github'), signedIn('ben', [])).ok).toBe(true);
  });

  it('lets a tool some allow rule covers through only when one matches, naming the scopes that would', () => {
    const rules: UpstreamRules = {
      allow: [
        rule('toy.allow[0]', { tools: 'tag:admin', claims: { role: ['owner'] } }),
        rule('toy.allow[1]', { tools: 'tag:admin', scopes: ['admin', 'audit'] }),
        rule('toy.allow[2]', { tools: 'tag:money', claims: { role: ['cfo'] } }),
      ],
      deny: [],
    };
    const policy = new AccessPolicy(new Map([['toy', rules]]));
    const faults = tool('faults', [], ['admin']);
    expect(policy.check(faults, signedIn('ada', ['audit']))).toEqual({
      ok: false,
      reason: 'no allow rule (toy.allow[0], toy.allow[1]) lets this caller use it',
      scopes: ['admin'],
    });
    expect(policy.check(faults, signedIn('ada', ['admin', 'audit']))).toEqual({ ok: true });
    expect(policy.check(faults, signedIn('ada', [], { role: 'owner' }))).toEqual({ ok: true });
    // Only a claim would allow it: no scope to step up to.
    expect(policy.check(tool('pay', [], ['money']), signedIn('ada', ['admin']))).toEqual({
      ok: false,
      reason: 'no allow rule (toy.allow[2]) lets this caller use it',
      scopes: [],
    });
    // A tool no allow rule covers needs none.
    expect(policy.check(tool('get_email', []), undefined)).toEqual({ ok: true });
    expect(policy.check(faults, undefined).ok).toBe(false);
  });
});

describe('forwardHeaderProblem', () => {
  it('allows ordinary header names and refuses credentials, its own headers, proxies and bad names', () => {
    for (const ok of ['X-Tenant', 'x-request-source', 'my-proxy-', 'a-x-forwarded-', 'accept-language'])
      expect(forwardHeaderProblem(ok), ok).toBeUndefined();
    const credential = 'is never forwarded: it is a credential, or describes the connection or body';
    expect(forwardHeaderProblem('Authorization')).toBe(credential);
    expect(forwardHeaderProblem('cookie')).toBe(credential);
    expect(forwardHeaderProblem('Proxy-Authorization')).toBe(credential);
    expect(forwardHeaderProblem('content-length')).toBe(credential);
    expect(forwardHeaderProblem('Mcp-Session-Id')).toBe(
      "is never forwarded: it is one of the gateway's own MCP headers",
    );
    expect(forwardHeaderProblem('mcp-protocol-version')).toBe(
      "is never forwarded: it is one of the gateway's own MCP headers",
    );
    expect(forwardHeaderProblem('X-Forwarded-For')).toBe('is never forwarded: it belongs to proxies');
    expect(forwardHeaderProblem('proxy-connection')).toBe('is never forwarded: it belongs to proxies');
    for (const bad of ['x tenant', ' x', 'x ', 'x\r\ny', 'é', ''])
      expect(forwardHeaderProblem(bad), JSON.stringify(bad)).toBe('is not a header name');
  });
});

describe('forwarded headers through the core', () => {
  it('copies listed caller headers (joined, the caller winning over a model argument), never a CR/LF or an unlisted one', async () => {
    const seen: IncomingMessage[] = [];
    const server = createServer((req, res) => {
      seen.push(req);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onCleanup(() => new Promise((r) => server.close(() => r(undefined))));
    const gateway = await createGateway({
      upstreamUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      upstreamApiKey: 'upstream-key-0123',
      forwardHeaders: ['x-tenant', 'x-list', 'x-bad', 'x-note', 'authorization'],
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Notes', version: '1' },
        components: { securitySchemes: { b: { type: 'http', scheme: 'bearer' } } },
        security: [{ b: [] }],
        paths: {
          '/notes': {
            get: {
              operationId: 'notes',
              parameters: [{ name: 'X-Note', in: 'header', schema: { type: 'string' } }],
              responses: {
                '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
              },
            },
          },
        },
      },
    });
    onCleanup(() => gateway.close());
    const outcome = await gateway.server.handle(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'notes', arguments: { 'X-Note': 'from the model' } },
      },
      {
        session: { protocolVersion: '2025-11-25', initialized: true },
        signal: new AbortController().signal,
        notify: () => undefined,
        headers: {
          'x-tenant': 'acme',
          'x-list': ['a', 'b'],
          'x-bad': 'one\r\nInjected: yes',
          'x-note': 'from the caller',
          'x-unlisted': 'no',
          authorization: 'Bearer the-callers-token',
        },
      },
    );
    expect(JSON.stringify(outcome)).toContain('"isError":false');
    const headers = seen[0]?.headers ?? {};
    expect(headers['x-tenant']).toBe('acme');
    expect(headers['x-list']).toBe('a, b');
    expect(headers['x-bad']).toBeUndefined();
    expect(headers.injected).toBeUndefined();
    expect(headers['x-note']).toBe('from the caller');
    expect(headers['x-unlisted']).toBeUndefined();
    expect(headers.authorization).toBe('Bearer upstream-key-0123');
  });
});
