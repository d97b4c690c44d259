import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  HttpClient,
  InvalidArgumentError,
  InvalidRequestError,
  isAPIError,
  isAuthenticationError,
  isConnectionError,
  isHttpClientError,
  isRateLimitError,
  Ledger,
  NotFoundError,
  OverloadedError,
  PermissionError,
  RateLimitError,
  ServerError,
} from '../src/index.js';
import { FakeClock } from './support/fake-clock.js';
import { json, startServer, startToyApi } from './support/servers.js';

describe('errors by type', () => {
  it('maps the toy API envelope to classes with status, request id, message and retryability', async () => {
    const api = await startToyApi();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, maxRetries: 0 });
    const readOnly = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.readKey, scheme: 'x-api-key' },
      maxRetries: 0,
    });
    const anonymous = new HttpClient({ baseUrl: api.url, maxRetries: 0 });
    await api.setFaults({
      rules: [
        { path: '/employees/e-01', action: 'status', status: 529 },
        { path: '/employees/e-02', action: 'status', status: 409, error_type: 'conflict_error' },
      ],
    });
    const cases: Array<[Promise<unknown>, new (...args: never[]) => Error, number, boolean]> = [
      [anonymous.get('/employees'), AuthenticationError, 401, false],
      [readOnly.post('/emails/m-0001/reply', { body: 'x' }), PermissionError, 403, false],
      [http.get('/employees/e-99'), NotFoundError, 404, false],
      [http.get('/employees', { query: { team: 'sales' } }), InvalidRequestError, 400, false],
      [http.get('/employees/e-02'), ConflictError, 409, true],
      [http.get('/flaky', { query: { fail_times: 1 } }), ServerError, 503, true],
      [http.get('/employees/e-01'), OverloadedError, 529, true],
    ];
    for (const [promise, cls, status, retryable] of cases) {
      const error = await promise.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(cls);
      expect(isAPIError(error)).toBe(true);
      expect(error).toMatchObject({ status, retryable });
      expect((error as { requestId: string }).requestId).toMatch(/^req_/);
      expect((error as { serverMessage: string }).serverMessage.length).toBeGreaterThan(3);
    }
    const invalid = await http.get('/employees', { query: { team: 'sales' } }).catch((e: unknown) => e);
    expect((invalid as Error).message).toBe(
      "GET /employees: 400 invalid_request_error: $.team: must be one of ['firmware', 'analytics', 'legal'], got 'sales'",
    );
  });

  it('reports a 429 as a RateLimitError carrying the wait the server asked for', async () => {
    const api = await startToyApi();
    const http = new HttpClient({ baseUrl: api.url, auth: { key: api.key }, maxRetries: 0 });
    await http.get('/limited');
    await http.get('/limited');
    const error = await http.get('/limited').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(isRateLimitError(error)).toBe(true);
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 1000, type: 'rate_limit_error' });
  });

  it('reports a refused connection as a retryable ConnectionError', async () => {
    const server = await startServer(() => undefined);
    const url = server.url;
    const http = new HttpClient({ baseUrl: url.replace(/:\d+$/, ':1'), maxRetries: 1, clock: new FakeClock() });
    const error = await http.get('/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(isConnectionError(error)).toBe(true);
    expect(isHttpClientError(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, attempts: 2, type: 'connection_error' });
    expect((error as Error).message).toMatch(/^GET \/: connection failed \(ECONNREFUSED\)/);
  });
});

describe('the secret', () => {
  it('is sent as a header, never in the URL, and appears in no error, ledger, inspect or JSON', async () => {
    const api = await startToyApi();
    const ledger = new Ledger();
    const http = new HttpClient({
      baseUrl: api.url,
      auth: { key: api.key },
      ledger,
      maxRetries: 1,
      clock: new FakeClock(),
    });
    const server = await startServer((req, res) => json(res, 200, { url: req.url, auth: req.headers.authorization }));
    const echo = new HttpClient({ baseUrl: server.url, auth: { key: api.key } });
    const seen = (await echo.get('/x')).data as { url: string; auth: string };
    expect(seen.url).toBe('/x');
    // What the server received; what it echoed back is scrubbed (response-limits.test.ts).
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${api.key}`);
    expect(seen.auth).toBe('Bearer [redacted]');

    const errors = await Promise.all([
      http.get('/flaky', { query: { fail_times: 5 } }).catch((e: unknown) => e),
      http.get('/employees/e-99').catch((e: unknown) => e),
      new HttpClient({ baseUrl: api.url, auth: { key: 'wrong-key-123' } }).get('/employees').catch((e: unknown) => e),
      new HttpClient({ baseUrl: api.url.replace(/:\d+$/, ':1'), auth: { key: api.key }, maxRetries: 0 })
        .get('/')
        .catch((e: unknown) => e),
    ]);
    const surfaces = [
      inspect(http, { depth: 10 }),
      JSON.stringify(http),
      String(http),
      ledger.toJsonLines(),
      ...errors.flatMap((e) => [
        inspect(e, { depth: 10, showHidden: true }),
        JSON.stringify(e),
        String(e),
        (e as Error).stack ?? '',
      ]),
    ];
    for (const text of surfaces) expect(text).not.toContain(api.key);
    expect(inspect(http)).toContain('[redacted]');
    expect(isAuthenticationError(errors[2])).toBe(true);
  });

  it('can come from the environment, and names the variable when it is missing', () => {
    process.env.AGENTWIRE_TEST_KEY = 'from-env-123';
    expect(() => new HttpClient({ baseUrl: 'http://127.0.0.1:1', auth: { env: 'AGENTWIRE_TEST_KEY' } })).not.toThrow();
    delete process.env.AGENTWIRE_TEST_KEY;
    expect(() => new HttpClient({ baseUrl: 'http://127.0.0.1:1', auth: { env: 'AGENTWIRE_TEST_KEY' } })).toThrow(
      'auth: the environment variable AGENTWIRE_TEST_KEY is not set',
    );
  });

  it('refuses a base URL that carries credentials or a query', () => {
    expect(() => new HttpClient({ baseUrl: 'http://user:pw@127.0.0.1:1' })).toThrow(/must not carry credentials/);
    expect(() => new HttpClient({ baseUrl: 'http://127.0.0.1:1/?key=abc' })).toThrow(/must not carry credentials/);
    expect(() => new HttpClient({ baseUrl: 'ftp://127.0.0.1' })).toThrow(/http or https/);
  });

  it("scrubs this client's key from what a server echoes back", async () => {
    const server = await startServer((req, res) =>
      json(res, 401, {
        error: { type: 'authentication_error', message: `Incorrect API key provided: ${req.headers.authorization}` },
      }),
    );
    const http = new HttpClient({ baseUrl: server.url, auth: { key: 'sk-echoed-secret-9' } });
    const error = await http.get('/').catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'GET /: 401 authentication_error: Incorrect API key provided: Bearer [redacted]',
    );
    expect(JSON.stringify(error)).not.toContain('sk-echoed-secret-9');
  });
});

describe('requests that cannot be sent', () => {
  it('are not retried: a key with a line break is our mistake, not the network', async () => {
    const server = await startServer((_req, res) => json(res, 200, {}));
    const http = new HttpClient({ baseUrl: server.url, auth: { key: 'bad\nkey' }, clock: new FakeClock() });
    const error = await http.get('/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ retryable: false, attempts: 1 });
    expect(server.hits()).toBe(0);
  });

  describe('a key hidden by JSON escapes (PHP writes / as \\/, .NET writes + as \\u002B)', () => {
    const key = 'sk-a/b+c-9';
    /** Every character of the key that an encoder may escape, escaped as each encoder does. */
    const php = key.replaceAll('/', '\\/');
    const dotnet = key.replaceAll('+', '\\u002B');
    const lower = key.replaceAll('+', '\\u002b').replaceAll('/', '\\u002f');

    it('never reaches the parsed value, the text, keys included, in any of the shapes', async () => {
      const raw = `{"echo":"${php}","list":["${dotnet}",{"deep":[["${lower}"]]}],"${dotnet}":1}`;
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(raw);
      });
      const http = new HttpClient({ baseUrl: server.url, auth: { key } });
      const response = await http.get('/');
      expect(JSON.parse(raw).echo).toBe(key); // what JSON.parse would have handed on
      expect(JSON.stringify(response.data)).not.toContain(key);
      expect(response.data).toEqual({
        echo: '[redacted]',
        list: ['[redacted]', { deep: [['[redacted]']] }],
        '[redacted]': 1,
      });
      expect(response.text).toBe(JSON.stringify(response.data));
    });

    it('leaves a body without escapes as the server wrote it', async () => {
      const raw = '{ "n": 12345678901234567890, "s": "plain" }';
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(raw);
      });
      const response = await new HttpClient({ baseUrl: server.url, auth: { key } }).get('/');
      expect(response.text).toBe(raw);
    });

    it("never reaches an error's message", async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(`{"error":{"type":"authentication_error","message":"bad key ${php} or ${dotnet}"}}`);
      });
      const error = await new HttpClient({ baseUrl: server.url, auth: { key } }).get('/').catch((e: unknown) => e);
      expect((error as Error).message).toBe('GET /: 401 authentication_error: bad key [redacted] or [redacted]');
      expect(JSON.stringify(error)).not.toContain(key);
    });

    it("never reaches a stream's events", async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: {"text":"${php}"}\n\ndata: {"${dotnet}":true}\n\n`);
      });
      const http = new HttpClient({ baseUrl: server.url, auth: { key } });
      const events: string[] = [];
      for await (const event of http.stream({ method: 'GET', path: '/' })) events.push(event.data);
      expect(events).toEqual(['{"text":"[redacted]"}', '{"[redacted]":true}']);
    });
  });
});
