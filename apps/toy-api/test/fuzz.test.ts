// Property-based hostile input against the toy API's JSON routes (seeded; 10,000 cases unless
// FUZZ_RUNS says otherwise): bodies, query strings, path values and headers that are wrong in
// every way. Never a 5xx, always the one error envelope with a known type; afterwards the API
// still answers and its memory is back where it was.
import { ERROR_TYPES } from '@agentwire/schemas/error-types';
import fc from 'fast-check';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { heapMb } from '../../../test-support/heap.js';
import { hostileBody, hostileValue } from '../../../test-support/hostile.js';
import { startApi } from './support/toy-api.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_130);

/** A path value or query value: mostly encoded, sometimes raw traversal and broken escapes. */
const hostileText = fc.oneof(
  hostileValue.map((v) =>
    encodeURIComponent(typeof v === 'string' ? v.slice(0, 3000) : (JSON.stringify(v) ?? '').slice(0, 3000)),
  ),
  fc.constantFrom(
    '..',
    '.',
    '../..',
    '%2e%2e',
    '%2F',
    '%00',
    '%ZZ',
    '%',
    'e-05%2F..%2F..',
    'e-05',
    'm-0001',
    '-1',
    '1e9',
    'true',
    '',
  ),
);

const request = fc.oneof(
  // JSON routes with hostile bodies.
  fc.record({
    method: fc.constant('POST'),
    path: fc.oneof(
      fc.constant('/digest'),
      fc.constantFrom('m-0001', 'm-9999').map((id) => `/emails/${id}/reply`),
      hostileText.map((id) => `/emails/${id}/reply`),
    ),
    query: fc.constantFrom('', '?stream=true', '?format=sse', '?stream=garbage'),
    body: hostileBody,
    contentType: fc.constantFrom(
      'application/json',
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      '',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
    ),
    idempotencyKey: fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
    ),
  }),
  // Read routes with hostile path values and query strings.
  fc.record({
    method: fc.constantFrom('GET', 'GET', 'DELETE', 'PUT', 'PATCH'),
    path: fc.oneof(
      fc.constantFrom('/employees', '/emails', '/health'),
      hostileText.map((id) => `/employees/${id}`),
      hostileText.map((id) => `/employees/${id}/office-days`),
      hostileText.map((id) => `/emails/${id}`),
      hostileText.map((id) => `/emails/${id}/replies`),
    ),
    query: fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'limit',
            'cursor',
            'urgent',
            'from',
            'date',
            'department',
            '__proto__',
            'constructor',
            'limit',
          ),
          hostileText,
        ),
        { maxLength: 4 },
      )
      .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : '')),
    body: fc.constant(undefined),
    contentType: fc.constantFrom(''),
    idempotencyKey: fc.constant(undefined),
  }),
);

describe('hostile input to the toy API', () => {
  it(`answers ${RUNS} hostile requests with the error envelope and no 5xx, then still serves`, async () => {
    const api = await startApi('memory', { admin: false });
    const pool = new Pool(api.url, { connections: 8 });
    const heapBefore = heapMb();
    const auth = fc.constantFrom('good', 'good', 'good', 'none', 'wrong', 'x-api-key', 'basic');

    await fc.assert(
      fc.asyncProperty(request, auth, async (r, a) => {
        const headers: Record<string, string> = {};
        if (r.contentType) headers['content-type'] = r.contentType;
        if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
        if (a === 'good') headers.authorization = `Bearer ${api.key}`;
        if (a === 'wrong') headers.authorization = `Bearer ${api.key}x`;
        if (a === 'x-api-key') headers['x-api-key'] = api.key;
        if (a === 'basic') headers.authorization = 'Basic Zm9vOmJhcg==';
        const response = await pool.request({
          path: `${r.path}${r.query}`,
          method: r.method as 'GET',
          headers,
          body: r.body ?? null,
        });
        const text = await response.body.text();
        const where = `${r.method} ${r.path.slice(0, 80)}${r.query.slice(0, 80)} -> ${response.statusCode} ${text.slice(0, 200)}`;
        expect(response.statusCode, where).toBeLessThan(500);
        if (response.statusCode === 204) return;
        const contentType = String(response.headers['content-type'] ?? '');
        if (contentType.startsWith('text/event-stream')) return;
        expect(contentType, where).toMatch(/^application\/json/);
        const body = JSON.parse(text) as Record<string, any>;
        if (response.statusCode >= 400) {
          expect(Object.keys(body), where).toEqual(['error']);
          expect(Object.keys(body.error).sort(), where).toEqual(['message', 'type']);
          expect(ERROR_TYPES, where).toContain(body.error.type);
          expect(body.error.message.length, where).toBeGreaterThan(0);
        }
        expect(Object.getPrototypeOf({}).polluted, 'prototype pollution').toBeUndefined();
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );

    await pool.close();
    const employees = await api.json('/employees?limit=3');
    expect(employees.status).toBe(200);
    expect(employees.body.data).toHaveLength(3);
    // Replies the fuzz stored legitimately are data, not a leak; everything else is collected.
    expect(heapMb() - heapBefore).toBeLessThan(16);
  }, 300_000);
});
