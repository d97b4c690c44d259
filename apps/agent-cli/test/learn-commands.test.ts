import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAgent } from './support/run-agent.js';

const EXAMPLES = new URL('../../../examples/lecture/', import.meta.url).pathname;
const example = (name: string) => join(EXAMPLES, name);
const KEY = 'learn-commands-key-0001';

describe('agent raw', () => {
  it("sends the exercise's broken request as it is: the body line is read as a bad header", async () => {
    const { code, stdout, stderr } = await runAgent(['raw', example('exercise-1-broken.http')]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(stdout).toContain('"message":"malformed HTTP request (HPE_INVALID_HEADER_TOKEN)"');
    expect(stderr).toMatch(/^agent raw: sent 101 bytes to 127\.0\.0\.1:\d+; \d+ bytes came back/);
  });

  it('fills in {{HOST}} and {{API_KEY}}, and never prints the key', async () => {
    const fixed = await runAgent(['raw', example('exercise-1-fixed.http')], { TOY_API_KEY: KEY });
    expect(fixed.stdout).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(fixed.stdout).toContain('"item_count":5');
    const noLength = await runAgent(['raw', example('exercise-1-no-length.http')]);
    expect(noLength.stdout).toMatch(/^HTTP\/1\.1 400 /);
    expect(noLength.stdout).toContain('body is empty but Content-Type is application/json');
    expect(fixed.stdout + fixed.stderr).not.toContain(KEY);
  });

  it("fills in {{READONLY_KEY}}, the embedded API's read-only key: a write with it is a 403", async () => {
    const readOnly = await runAgent(['raw', example('break-read-only.http')]);
    expect(readOnly.stdout).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(readOnly.stdout).toContain('"type":"permission_error"');
    // A running API's read-only key is not known unless TOY_API_READONLY_KEY says it: refused before sending.
    const unknown = await runAgent(['raw', example('break-read-only.http'), '--api-url', 'http://127.0.0.1:9'], {
      TOY_API_KEY: KEY,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('{{READONLY_KEY}} needs a read-only key: set TOY_API_READONLY_KEY');
  });

  it('reads stdin; --crlf turns typed line ends into CRLF; a long Content-Length is answered 408', async () => {
    const typed = 'GET /health HTTP/1.1\nHost: {{HOST}}\nConnection: close\n\n';
    const asTyped = await runAgent(['raw', '-', '--crlf'], {}, typed);
    expect(asTyped.stdout).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"ok":true\}/);
    const long = await runAgent(
      ['raw', '-'],
      {},
      'POST /digest HTTP/1.1\r\nHost: {{HOST}}\r\nAuthorization: Bearer {{API_KEY}}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"date": "2026-06-10"}',
    );
    expect(long.stdout).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it('refuses nothing to send, a file it cannot read, and more than 128 KiB, naming the limit', async () => {
    const empty = await runAgent(['raw', '-'], {}, '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/stdin is empty: there is nothing to send/);
    const missing = await runAgent(['raw', '/no/such/file.http']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read \/no\/such\/file\.http: ENOENT/);
    const big = await runAgent(['raw', '-'], {}, Buffer.alloc(128 * 1024 + 1, 'a'));
    expect(big.code).toBe(2);
    expect(big.stderr).toMatch(/is 131073 bytes; agent raw sends at most 131072 \(MAX_RAW_BYTES\)/);
  });
});

describe('agent validate', () => {
  const schema = example('send_email.schema.json');

  it("prints what a model would read for the exercise's arguments, with the gateway's validator", async () => {
    const { code, stdout } = await runAgent([
      'validate',
      '--schema',
      schema,
      '--args',
      '{"to": "ada@cardinal-energy.example", "subject": "hi", "body": "x"}',
    ]);
    expect(code).toBe(1);
    expect(stdout).toBe('Invalid arguments for tool send_email:\n$.to: expected array, got string\n');
  });

  it('checks minItems, patterns and unknown fields; valid arguments exit 0', async () => {
    const bad = await runAgent([
      'validate',
      '--schema',
      schema,
      '--args',
      '{"to": [], "subject": "hi", "body": "x", "cc": ["not an email"], "bcc": 1}',
    ]);
    expect(bad.stdout.split('\n').slice(1, -1).sort()).toEqual([
      "$.cc[0]: 'not an email' does not match pattern ^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$",
      '$.to: has 0 items, fewer than minItems 1',
      "$: unexpected property 'bcc' (allowed: ['to', 'subject', 'body', 'cc'])",
    ]);
    const good = await runAgent([
      'validate',
      '--schema',
      schema,
      '--args',
      '{"to": ["ada@cardinal-energy.example"], "subject": "hi", "body": "x"}',
    ]);
    expect(good.code).toBe(0);
    expect(good.stdout).toMatch(/^valid: send_email takes /);
  });

  it('takes a schema inline, and says what is wrong with a bad schema or bad JSON', async () => {
    const inline = await runAgent([
      'validate',
      '--schema',
      '{"type": "object", "properties": {"n": {"type": "integer"}}}',
      '--args',
      '{"n": 2.5}',
      '--name',
      'count',
    ]);
    expect(inline.stdout).toBe('Invalid arguments for tool count:\n$.n: expected integer, got number 2.5\n');
    const badJson = await runAgent(['validate', '--schema', schema, '--args', '{to:']);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/--args is not JSON: /);
    const badSchema = await runAgent(['validate', '--schema', '{"type": "frog"}', '--args', '{}']);
    expect(badSchema.code).toBe(2);
    expect(badSchema.stderr).toMatch(/--schema is not a schema the validator can use: /);
  });
});

describe('exercise 5: read_document, and your own OpenAPI file', () => {
  it('shows the two kinds of errors: a bad id before any call, a missing document as a result', async () => {
    const handbook = await runAgent(['call', 'read_document', '--args', '{"doc_id": "handbook"}']);
    expect(handbook.code).toBe(1);
    expect(JSON.parse(handbook.stdout)).toMatchObject({ isError: true });
    expect(handbook.stdout).toContain("$.doc_id: 'handbook' does not match pattern ^doc-\\\\d{3}$");
    const missing = await runAgent(['call', 'read_document', '--args', '{"doc_id": "doc-404"}']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain("no document 'doc-404'; the documents are: doc-001");
    const found = await runAgent(['call', 'read_document', '--args', '{"doc_id": "doc-001"}']);
    expect(found.code).toBe(0);
    expect(found.stdout).toContain('Employee handbook');
  });

  it('serves the tools of the OpenAPI file in OPENAPI_URL, with no rebuild', async () => {
    const env = { OPENAPI_URL: example('my-tools.openapi.json') };
    const listed = await runAgent(['tools', '--format', 'json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).tools.map((t: { name: string }) => t.name)).toEqual(['read_doc', 'team_members']);
    const called = await runAgent(['call', 'team_members', '--args', '{"team": "legal"}'], env);
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout).toContain('Iris Novak');
  });
});

describe('exercise 2 and 8: retry settings added up, and the tool list scaled', () => {
  it('agent get with retry settings prints the attempts and the waits; the retry budget can be turned off', async () => {
    const run = `ex2-${Date.now()}`;
    const { code, stdout, stderr } = await runAgent([
      'get',
      `/flaky?fail_times=9&run=${run}`,
      '--max-retries',
      '2',
      '--base-delay',
      '0.05',
      '--no-jitter',
      '--no-retry-budget',
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/503 api_error/);
    expect(stderr).toBe('attempts: 3; waits before the retries: [0.05, 0.1] s, 0.15 s in all\n');
    const bad = await runAgent(['get', '/health', '--max-retries', '99']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-retries must be from 0 to 10, got '99'/);
  });

  it('agent tools --only counts a subset and prints the arithmetic for 40 tools and 20 steps', async () => {
    const { code, stdout } = await runAgent([
      'tools',
      '--only',
      'office_days,get_email,read_document',
      '--format',
      'json',
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.tools.map((t: { name: string }) => t.name)).toEqual(['office_days', 'get_email', 'read_document']);
    const perTool = Math.round(report.tokens.fullListTokens / 3);
    expect(report.scale).toEqual({
      tools: 40,
      steps: 20,
      tokensPerTool: perTool,
      perStep: 40 * perTool,
      perTask: 800 * perTool,
    });
    const text = await runAgent(['tools', '--only', 'office_days,get_email,read_document']);
    expect(text.stdout).toContain(`5 servers with 40 tools in all: 40 x ${perTool} = ${40 * perTool} tokens`);
    const unknown = await runAgent(['tools', '--only', 'office_days,send_email']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--only: no tool named 'send_email'; the tools are: health, /);
  });
});
