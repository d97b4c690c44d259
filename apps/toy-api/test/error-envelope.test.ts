import { once } from 'node:events';
import { maxHeaderSize } from 'node:http';
import { connect } from 'node:net';
import { ERROR_TYPES } from '@agentwire/schemas';
import { describe, expect, it } from 'vitest';
import { STORES, setFaults, startApi } from './support/toy-api.js';

/** Sends raw bytes and returns what came back before the server closed or `waitMs` passed. */
function raw(url: string, bytes: string, waitMs = 1000): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (chunk) => {
      received += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    setTimeout(() => socket.destroy(), waitMs);
  });
}

function expectEnvelope(body: unknown, type: string): void {
  expect(body).toEqual({ error: { type, message: expect.any(String) } });
  expect(ERROR_TYPES).toContain(type);
}

describe('connections (TOY_API_MAX_CONNECTIONS)', () => {
  it('are capped: past the cap a new one is dropped unanswered, and a closed one frees its place', async () => {
    const api = await startApi('memory', { maxConnections: 1 });
    const { port } = new URL(api.url);
    const first = connect(Number(port), '127.0.0.1');
    await once(first, 'connect');
    const open = () => new Promise<number>((resolve) => api.app.server.getConnections((_e, n) => resolve(n)));
    await expect.poll(open).toBe(1);
    expect(await raw(api.url, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toBe('');
    first.destroy();
    await expect.poll(open).toBe(0);
    expect(await raw(api.url, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(
      /^HTTP\/1\.1 200 OK\r\n/,
    );
  });
});

describe.each(STORES)('one error envelope for every error (%s store)', (store) => {
  it('400 invalid_request_error in the envelope for a request without Host, not a bare 400', async () => {
    const api = await startApi(store);
    const got = await raw(api.url, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { type: 'invalid_request_error', message: 'a Host header is required (HTTP/1.1)' },
    });
  });

  it('404 not_found_error for an unknown route', async () => {
    const api = await startApi(store);
    const { status, body } = await api.json('/nope');
    expect(status).toBe(404);
    expectEnvelope(body, 'not_found_error');
    expect(body.error.message).toBe('no route GET /nope; GET /openapi.json lists the routes');
  });

  it('413 request_too_large for a body over the limit', async () => {
    const api = await startApi(store, { bodyLimit: 1024 });
    const { status, body } = await api.json('/digest', { body: { date: 'x'.repeat(2000) } });
    expect(status).toBe(413);
    expectEnvelope(body, 'request_too_large');
    expect(body.error.message).toBe('request body is larger than the limit of 1024 bytes');
  });

  it('415 for a Content-Type other than JSON', async () => {
    const api = await startApi(store);
    const response = await api.call('/digest', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(response.status).toBe(415);
    expectEnvelope(await response.json(), 'invalid_request_error');
  });

  it('400 for malformed JSON, with where it broke', async () => {
    const api = await startApi(store);
    const response = await api.call('/digest', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"date": ',
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expectEnvelope(body, 'invalid_request_error');
    expect(body.error.message).toMatch(/^body is not valid JSON: /);
  });

  it('400 for an empty JSON body and for a __proto__ key', async () => {
    const api = await startApi(store);
    const empty = await api.call('/digest', { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(empty.status).toBe(400);
    expect((await empty.json()).error.message).toMatch(/^body is empty/);
    const poisoned = await api.call('/digest', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"date":"2026-06-10","__proto__":{"admin":true}}',
    });
    expect(poisoned.status).toBe(400);
    expect((await poisoned.json()).error.message).toMatch(/__proto__/);
  });

  it('400 for a key written twice in one object, naming it and where; the same key in two objects is fine', async () => {
    const api = await startApi(store);
    const send = (body: string) =>
      api.call('/digest', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const twice = await send('{"date": "2026-06-10",\n "max_items": 3, "date": "2026-06-11"}');
    expect(twice.status).toBe(400);
    const body = await twice.json();
    expectEnvelope(body, 'invalid_request_error');
    expect(body.error.message).toBe(
      "body has the key 'date' twice in one object (line 2, column 18); send each key once (parsers disagree on which value wins)",
    );
    const apart = await api.call('/emails/m-0001/reply', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `dup-${store}-${Date.now()}` },
      body: '{"body": "ok", "meta": {"body": "nested, not a duplicate"}}',
    });
    // Past the parser: the schema refuses the made-up 'meta', not the parser a duplicate.
    expect((await apart.json()).error.message).toMatch(/unexpected property 'meta'/);
    const nested = await send('{"date": "2026-06-10", "x": {"a": 1, "a": 2}}');
    expect((await nested.json()).error.message).toMatch(
      /^body has the key 'a' twice in one object \(line 1, column 38\)/,
    );
    expect((await send('{"date": "2026-06-10", "max_items": 3}')).status).toBe(200);
  });

  it('400 with the JSON error when Content-Length is shorter than the body', async () => {
    const api = await startApi(store);
    const body = '{"date": "2026-06-10"}';
    const answer = await raw(
      api.url,
      `POST /digest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: 10\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4, answer.indexOf('}}') + 2));
    expectEnvelope(json, 'invalid_request_error');
    expect(json.error.message).toMatch(/^body is not valid JSON: Unterminated string/);
  });

  it('408 in the envelope when Content-Length is longer than the body that arrives', async () => {
    const api = await startApi(store, { requestTimeoutMs: 300 });
    const answer = await raw(
      api.url,
      `POST /digest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.key}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 100\r\n\r\n{"date": "2026-06-10"}',
      3000,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/\r\nrequest-id: req_[0-9a-f]{24}\r\n/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expectEnvelope(body, 'invalid_request_error');
    expect(body.error.message).toBe('the request did not arrive in full within 300 ms');
  });

  it("431 in the envelope for headers over Node's limit, naming it", async () => {
    const api = await startApi(store);
    const answer = await raw(
      api.url,
      `GET /employees HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(maxHeaderSize)}\r\n\r\n`,
      3000,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expectEnvelope(body, 'request_too_large');
    expect(body.error.message).toBe(
      `the request headers are larger than ${maxHeaderSize} bytes in all (Node's --max-http-header-size)`,
    );
  });

  it('400 in the envelope, with a request id, for a malformed URL', async () => {
    const api = await startApi(store);
    const response = await api.call('/employees/%E0%A4%A');
    expect(response.status).toBe(400);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const body = await response.json();
    expectEnvelope(body, 'invalid_request_error');
    expect(body.error.message).toMatch(/^the request URL is malformed/);
  });

  it('400 in the envelope for bytes that are not HTTP at all', async () => {
    const api = await startApi(store);
    const answer = await raw(api.url, 'HELLO THERE\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nrequest-id: req_[0-9a-f]{24}\r\n/);
    expectEnvelope(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), 'invalid_request_error');
  });

  it('400 in the envelope for CR or LF smuggled into a header name or value', async () => {
    const api = await startApi(store);
    for (const header of [
      `X-Bad\rName: 1`,
      `X-Bad Name: 1`,
      `X-Ok: a\rX-Injected: 1`,
      `Authorization\n: Bearer ${api.key}`,
    ]) {
      const answer = await raw(api.url, `GET /emails HTTP/1.1\r\nHost: localhost\r\n${header}\r\n\r\n`);
      expect({ header, status: answer.slice(0, 12) }).toEqual({ header, status: 'HTTP/1.1 400' });
      expectEnvelope(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), 'invalid_request_error');
    }
  });

  it('uses overloaded_error for 529 and api_error for other 5xx', async () => {
    const api = await startApi(store);
    await setFaults(api, {
      rules: [
        { path: '/employees', action: 'status', status: 529 },
        { path: '/employees/{employee_id}', action: 'status', status: 502 },
      ],
    });
    const overloaded = await api.json('/employees');
    expect(overloaded.status).toBe(529);
    expectEnvelope(overloaded.body, 'overloaded_error');
    const bad = await api.json('/employees/e-01');
    expect(bad.status).toBe(502);
    expectEnvelope(bad.body, 'api_error');
  });
});
