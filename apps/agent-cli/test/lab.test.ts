import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runAgent } from './support/run-agent.js';

interface LabJson {
  lab: number;
  demos: Array<{
    title: string;
    tables: Array<{ columns: string[]; rows: unknown[][] }>;
    notes: string[];
    wire: string[];
  }>;
}

const lab = (n: string, ...more: string[]) => runAgent(['lab', n, ...more]);

async function labJson(n: string, ...more: string[]): Promise<LabJson> {
  const { code, stdout, stderr } = await lab(n, '--json', ...more);
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as LabJson;
}

/** The rows of the first table of the demo whose title contains `title`. */
function rowsOf(report: LabJson, title: string, table = 0): unknown[][] {
  const demo = report.demos.find((d) => d.title.includes(title));
  if (!demo)
    throw new Error(`no demo '${title}' in lab ${report.lab}: ${report.demos.map((d) => d.title).join(' | ')}`);
  return demo.tables[table]?.rows ?? [];
}

const row = (rows: unknown[][], first: string) => rows.find((r) => r[0] === first);

/** The labs' text is for an 80-column terminal. */
function expectFits(stdout: string) {
  const long = stdout.split('\n').filter((line) => line.length > 80);
  expect(long).toEqual([]);
}

describe('agent lab, as text', () => {
  it('1: a raw request, keep-alive, GET vs POST, the status-code table, both wrong Content-Lengths', async () => {
    const { code, stdout } = await lab('1');
    expect(code).toBe(0);
    // Each line's CR LF is shown as a visible \r\n, so the bytes can be counted.
    expect(stdout).toContain('GET /health HTTP/1.1\\r\\n\n');
    expect(stdout).toContain('HTTP/1.1 200 OK\\r\\n\n');
    expect(stdout).toContain('Connection: close\\r\\n\n\\r\\n\n{"ok":true}');
    expect(stdout).toMatch(/GET \/emails without a token +401 +authentication_error +fix the request/);
    expect(stdout).toMatch(/POST \/digest without date +400 +invalid_request_error/);
    expect(stdout).toMatch(/GET \/flaky, a temporary +503 +api_error +retry, with backoff/);
    expect(stdout).toMatch(/body is not valid/);
    expectFits(stdout);
  });

  it('2: JSON round trips, numbers, a duplicate key and the validator messages', async () => {
    const { code, stdout } = await lab('2');
    expect(code).toBe(0);
    expect(stdout).toMatch(/NaN +null +CHANGED -> null/);
    expect(stdout).toMatch(/\{"limit": "2"\} +a number written as a +\$\.limit: expected integer,/);
    expectFits(stdout);
  });

  it('3: auth, timeouts, retries with their waits, Retry-After, no retry on 404, SSE, the ledger', async () => {
    const { code, stdout } = await lab('3');
    expect(code).toBe(0);
    expect(stdout).toMatch(/a wrong token +401 authentication_error \(retryable: false\)/);
    expect(stdout).toMatch(/0\.2 s +0\.4 s +timeout_error \(retryable: true\)/);
    expect(stdout).toMatch(/1 s +0\.4 s +200/);
    expect(stdout).toContain('backoff waits: [0.5, 1] (base 0.5 s * 2^k)');
    expect(stdout).toMatch(/the client waited \[1(, 1)*\] s, as told/);
    expect(stdout).toMatch(/404 not_found_error \(retryable: false\) after 1 attempt/);
    expect(stdout).toMatch(/requests sent \(retries included\) +6/);
    expectFits(stdout);
  });

  it('4: the handshake, the refusals, the two kinds of errors, stdio, the session table, the tools with tokens', async () => {
    const { code, stdout } = await lab('4');
    expect(code).toBe(0);
    expect(stdout).toMatch(/2 notifications\/initialized +202/);
    expect(stdout).toMatch(/send_email\(\{\}\) +no such tool +protocol error -32602/);
    expect(stdout).toMatch(/tools\/list on the ended session +404/);
    expect(stdout).toContain('office_days(employee_id: string)');
    expectFits(stdout);
  });

  it('traces the clients of lab 3 with --trace', async () => {
    const { code, stderr } = await runAgent(['lab', '3', '--trace']);
    expect(code).toBe(0);
    expect(stderr).toMatch(/^http {2}http GET \/flaky #2 after 500 ms backoff -> 503 api_error/m);
  });

  it('refuses a lab it does not have, a revision it does not speak, and lab 4 with an API but no gateway', async () => {
    const none = await lab('9');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/usage: agent lab 1\|2\|3\|4/);
    const revision = await lab('4', '--protocol-version', '2026-07-28');
    expect(revision.code).toBe(2);
    expect(revision.stderr).toMatch(
      /--protocol-version must be one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25; got '2026-07-28'/,
    );
    const noGateway = await lab('4', '--api-url', 'http://127.0.0.1:9');
    expect(noGateway.code).toBe(2);
    expect(noGateway.stderr).toMatch(/lab 4 talks to a gateway: with --api-url, give --mcp-url/);
    expect(noGateway.stderr).not.toMatch(/TypeError/);
  });

  it('4 against a gateway it cannot reach, or a server that is not one, says so instead of crashing', async () => {
    const env = { TOY_API_KEY: 'lab-test-key-0001' };
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((resolve) => probe.close(resolve));
    const down = await runAgent(['lab', '4', '--api-url', closed, '--mcp-url', `${closed}/mcp`], env);
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(`agent: cannot reach the MCP gateway at ${closed}/mcp: ECONNREFUSED\n`);
    const server = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const wrong = await runAgent(['lab', '4', '--api-url', url, '--mcp-url', `${url}/mcp`], env);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toBe(`agent: the server at ${url}/mcp did not accept initialize: HTTP 404 Not Found\n`);
    } finally {
      server.close();
    }
  });
});

describe('agent lab --json: the new rows, on structure and values', () => {
  it('1: no Host, keep-alive on one socket, and a long Content-Length answered 408 after the lab timeout', async () => {
    const report = await labJson('1');
    expect(report.lab).toBe(1);
    const keepAlive = rowsOf(report, 'keep-alive');
    expect(keepAlive).toHaveLength(2);
    expect(keepAlive[0]?.[1]).toBe(keepAlive[1]?.[1]);
    for (const r of keepAlive) expect(r.slice(2, 4)).toEqual(['HTTP/1.1 200 OK', 'keep-alive']);
    expect(row(rowsOf(report, 'status codes'), 'GET /health with no Host header (raw)')).toEqual([
      'GET /health with no Host header (raw)',
      400,
      'invalid_request_error',
      'fix the request',
    ]);
    const lengths = rowsOf(report, 'Content-Length');
    expect(lengths[0]?.slice(2)).toEqual([
      '400 Bad Request',
      'body is not valid JSON: Unterminated string in JSON at position 10',
    ]);
    expect(lengths[1]?.[2]).toBe('408 Request Timeout');
    expect(lengths[1]?.[3]).toMatch(/^after \d+\.\d s: the request did not arrive in full within 1500 ms$/);
    expect(report.demos.at(-1)?.notes[0]).toMatch(/request timeout of 1\.5 s/);
  });

  it('1: a 202 then a 303 for a long job, 403 for the read-only key writing, 413 for a 70 KB body', async () => {
    const codes = rowsOf(await labJson('1'), 'status codes');
    expect(row(codes, 'POST /exports, a long job')).toEqual(['POST /exports, a long job', 202, '-', 'carry on']);
    expect(row(codes, 'GET /exports/{id}, once done')).toEqual([
      'GET /exports/{id}, once done',
      303,
      '-',
      'follow Location',
    ]);
    expect(row(codes, 'POST /notes with the read-only key')).toEqual([
      'POST /notes with the read-only key',
      403,
      'permission_error',
      'fix the request',
    ]);
    expect(row(codes, 'POST /digest, a 70 KB body')).toEqual([
      'POST /digest, a 70 KB body',
      413,
      'request_too_large',
      'fix the request',
    ]);
  });

  it("2: the lecture's three styles of error message, the last one our validator's own", async () => {
    const styles = rowsOf(await labJson('2'), 'part of the prompt');
    expect(styles.map((r) => r[0])).toEqual(['too terse', 'where only', 'ours']);
    expect(styles[2]?.[1]).toBe("$.team: must be one of ['firmware', 'analytics', 'legal'], got 'sales'");
  });

  it('3: a cut stream resumed from Last-Event-ID loses nothing and repeats nothing; --no-key stores the reply twice', async () => {
    const report = await labJson('3');
    const attempts = rowsOf(report, 'resumed from Last-Event-ID');
    expect(attempts.map((r) => r.slice(0, 3))).toEqual([
      [1, 200, 'connection_error'],
      [2, 200, 'success'],
    ]);
    expect(attempts[0]?.[3]).toBe('-');
    expect(attempts[1]?.[3]).toMatch(/^\d+$/);
    const events = Object.fromEntries(rowsOf(report, 'resumed from Last-Event-ID', 1) as Array<[string, number]>);
    expect(events['read twice']).toBe(0);
    expect(events['read in all']).toBe(events['in the same stream, not cut']);
    expect(events['read in all']).toBeGreaterThan(3);

    const unkeyed = await labJson('3', '--no-key');
    const retried = rowsOf(unkeyed, 'WITHOUT a key');
    expect(retried.map((r) => r.slice(0, 4))).toEqual([
      [1, 201, 'connection_error', 'none'],
      [2, 201, 'success', 'none'],
    ]);
    expect(rowsOf(unkeyed, 'WITHOUT a key', 1)).toEqual([
      ['idempotent-replayed header', 'absent'],
      ['replies stored for m-0042', 2],
    ]);
    // A sick upstream: the breaker's states, one call at a time, and a stall cut by a hedge.
    expect(rowsOf(report, 'a sick upstream')).toEqual([
      ['1-10', '503 sent, failed'],
      ['11-12', 'refused at once, not sent'],
      ['13', '200, the probe: closed'],
      ['14', '200'],
    ]);
    const sick = report.demos.find((d) => d.title.includes('a sick upstream'));
    expect(sick?.notes[0]).toMatch(
      /^The breaker went closed -> open, then half_open -> closed \(upstream requests: 12 of 14 calls\)/,
    );
    expect(rowsOf(report, 'a sick upstream', 1).map((r) => [r[0], r[1]])).toEqual([
      ['without a hedge', 1],
      ['a hedge after 100 ms', 2],
    ]);
    expect(rowsOf(report, 'a sick upstream', 1)[1]?.[2]).toMatch(/the stalled one aborted/);
    const refused = await lab('1', '--no-key');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--no-key is for lab 3');
  }, 60_000);

  it('2: 2^53 + 1 and 2^70 + 1 change, 2^70 only looks safe, 2.0 is an integer, a duplicate key is refused', async () => {
    const report = await labJson('2');
    const numbers = rowsOf(report, 'numbers');
    expect(numbers).toEqual([
      ['9007199254740992 (2^53)', '9007199254740992', 'same'],
      ['9007199254740993 (2^53 + 1)', '9007199254740992', 'CHANGED by 1'],
      ['1180591620717411303424 (2^70)', '1180591620717411303424', 'same'],
      ['1180591620717411303425 (2^70 + 1)', '1180591620717411303424', 'CHANGED by 1'],
      ['2.0', '2', 'Number.isInteger: true'],
    ]);
    expect(rowsOf(report, 'survives').map((r) => r[0])).not.toContain('2 ** 70');
    expect(rowsOf(report, 'twice')).toEqual([
      ['JSON.parse', 'keeps the last: {"date":"2026-06-11"}'],
      [
        'the toy API, POST /digest',
        "400: body has the key 'date' twice in one object (line 1, column 24); send each key once (parsers disagree on which value wins)",
      ],
    ]);
    expect(row(rowsOf(report, 'arguments models get wrong'), '{"limit": 2.0}')).toEqual([
      '{"limit": 2.0}',
      '2.0 for an integer',
      'valid',
    ]);
  });

  it('3: a lost answer replayed by its key with one reply stored; chunked on the wire; a stream stopped early stops upstream', async () => {
    const report = await labJson('3');
    const attempts = rowsOf(report, 'lost on the way back');
    expect(attempts.map((r) => r.slice(0, 3))).toEqual([
      [1, 201, 'connection_error'],
      [2, 201, 'success'],
    ]);
    expect(attempts[0]?.[3]).toBe(attempts[1]?.[3]);
    expect(rowsOf(report, 'lost on the way back', 1)).toEqual([
      ['idempotent-replayed header', 'true'],
      ['replies stored for m-0042', 1],
    ]);
    const [chunked] = rowsOf(report, 'chunked');
    expect(chunked?.slice(0, 2)).toEqual(['chunked', null]);
    expect(chunked?.[2]).toBeGreaterThan(2);
    expect(chunked?.[3]).toBe(0);
    expect(report.demos.find((d) => d.title.includes('chunked'))?.wire[0]).toMatch(/Transfer-Encoding: chunked/i);
    const stopped = Object.fromEntries(rowsOf(report, 'stopping a stream early') as Array<[string, number]>);
    expect(stopped['events the client read, then stopped']).toBe(3);
    expect(stopped['streams still open on the API']).toBe(0);
    expect(stopped['streams ended because the client left']).toBe(1);
    // Sent before the API noticed: a few, never the whole digest.
    expect(stopped['events the API sent in all']).toBeLessThan(stopped['delta events the whole digest has'] as number);
  });

  it('4: the refusals at each layer, a log line on stdout, and how the errors change with --protocol-version', async () => {
    const report = await labJson('4');
    const refusals = rowsOf(report, 'refused at each layer');
    const statusAndCode = refusals.map((r) => [r[0], r[1], String(r[2]).split(' ')[0]]);
    expect(statusAndCode).toEqual([
      ['tools/list without the bearer token', 401, '-32600'],
      ['Accept: text/html', 406, '-32600'],
      ['MCP-Protocol-Version: 1999-01-01', 400, '-32600'],
      ['a body that is not JSON', 400, '-32700'],
      ['method tools/lists (a typo)', 200, '-32601'],
      ['initialize asking for 2099-01-01', 200, 'result,'],
    ]);
    expect(refusals.at(-1)?.[2]).toBe('result, protocolVersion 2025-11-25');
    const logLine = rowsOf(report, 'a log line on stdout');
    expect(logLine[0]?.[1]).toMatch(/^failed at line 1: .*"debug: got a message"/);
    expect(logLine[1]?.[1]).toMatch(/^reported 2 bad lines \(SyntaxError/);
    expect(logLine[2]?.[1]).toBe('skipped the bad lines without a word');
    expect(logLine[1]?.[2]).toBe(19);
    const errors = (r: LabJson) => Object.fromEntries(rowsOf(r, 'two kinds of tool errors').map((x) => [x[1], x[2]]));
    const old = errors(report);
    expect(old['no such tool']).toMatch(/^protocol error -32602: Unknown tool: send_email/);
    expect(old['an argument in the wrong format']).toMatch(/^protocol error -32602: .*\$\.doc_id/);
    expect(old['valid, but no such document']).toMatch(/^result, isError=true: .*no document 'doc-404'/);
    // The handshake as JSON, the capabilities included.
    const handshake = report.demos[0]?.wire.join('\n') ?? '';
    expect(handshake).toContain('"capabilities": {}');
    expect(handshake).toMatch(/"capabilities": \{\s+"tools": \{\s+"listChanged": true\s+\},\s+"logging": \{\}/);
    const sessions = rowsOf(report, 'sessions over HTTP');
    expect(row(sessions, 'tools/list with Host: evil.example')?.[1]).toBe(403);
    expect(row(sessions, 'GET /mcp without a session')).toEqual([
      'GET /mcp without a session',
      405,
      'nothing to listen to (Allow: POST)',
    ]);
    expect(row(sessions, 'GET /mcp with the session')?.slice(0, 2)).toEqual(['GET /mcp with the session', 200]);
    expect(row(sessions, 'GET /mcp with the session')?.[2]).toMatch(/^text\/event-stream/);
    // stdio: stopped by closing stdin, no signal.
    expect(report.demos.find((d) => d.title.includes('over stdio, one JSON'))?.notes[0]).toMatch(
      /closed stdin and the gateway exited on its own, code 0, \d+ ms later/,
    );
    // The slow call was sent first, the quick one is answered first: matched by id.
    const race = rowsOf(report, 'replies matched by id');
    expect(race.map((r) => [r[1], String(r[3]).split(',')[0]])).toEqual([
      [2, 'second'],
      [3, 'first'],
    ]);
    const revisions = rowsOf(report, 'no handshake, no session');
    expect(revisions).toEqual([
      ['2025-11-25', 3, 'yes', 'initialize, then a header'],
      ['2026-07-28', 1, 'none', 'every request'],
    ]);
    expect(report.demos.find((d) => d.title.includes('no handshake'))?.notes[0]).toMatch(
      /^Answered HTTP 200: a tool result \(isError: false\)/,
    );
    const latest = errors(await labJson('4', '--protocol-version', '2025-11-25'));
    expect(latest['no such tool']).toMatch(/^protocol error -32602/);
    expect(latest['an argument in the wrong format']).toMatch(/^result, isError=true: .*\$\.doc_id/);
  });
});
