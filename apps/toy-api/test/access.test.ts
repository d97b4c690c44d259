// Access, route by route: every operation the API documents needs the key, except /health;
// CORS is off, so a browser page on another site cannot read any answer.
import { describe, expect, it } from 'vitest';
import { startApi } from './support/toy-api.js';

const PUBLIC = new Set(['/health']);

describe('access to the toy API', () => {
  it('answers 401 without a key on every documented operation but /health', async () => {
    const api = await startApi('memory');
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(12);
    for (const { path, method, op } of operations) {
      const concrete = path.replace('{employee_id}', 'e-05').replace('{email_id}', 'm-0001');
      const response = await fetch(`${api.url}${concrete}`, {
        method,
        ...(method === 'GET' || method === 'DELETE'
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: '{}' }),
      });
      if (PUBLIC.has(path)) {
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
        expect(op.security).toEqual([]);
      } else {
        expect({ path, method, status: response.status }).toEqual({ path, method, status: 401 });
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    }
  });

  it('sends no CORS headers: a preflight from another site is not allowed', async () => {
    const api = await startApi('memory');
    const preflight = await fetch(`${api.url}/emails`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-headers')).toBeNull();
    const read = await api.call('/emails', { headers: { origin: 'https://evil.example' } });
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
  });
});
