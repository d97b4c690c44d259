import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '@agentwire/toy-api';
import { afterEach, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../../../test-support/otlp-receiver.js';
import { AGENT_BIN, runAgent } from './support/run-agent.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Runs `agent`, giving triage a ledger file of its own, and reads the ledger back. */
async function agent(args: string[], env: Record<string, string> = {}) {
  const ledger = join(tmpdir(), `agent-test-${randomBytes(6).toString('hex')}.jsonl`);
  const result = await runAgent([...args, ...(args[0] === 'triage' ? ['--ledger', ledger] : [])], env);
  let entries: Array<Record<string, any>> = [];
  try {
    entries = readFileSync(ledger, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    entries = [];
  }
  return { ...result, entries };
}

async function runningApi() {
  const key = `ext-${randomBytes(10).toString('hex')}`;
  const app = await buildApp({ apiKey: key, admin: true });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const auth = { authorization: `Bearer ${key}` };
  return {
    url,
    key,
    async faults(rules: unknown[]) {
      const installed = await fetch(`${url}/admin/faults`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ rules }),
      });
      if (!installed.ok) throw new Error(`PUT /admin/faults answered ${installed.status}: ${await installed.text()}`);
    },
    async replies(id: string) {
      return ((await (await fetch(`${url}/emails/${id}/replies`, { headers: auth })).json()) as { data: unknown[] })
        .data;
    },
  };
}

describe('agent triage', () => {
  it('completes through the API, the gateway over stdio and over HTTP despite the demo faults, and the ledger shows where the retries happened', async () => {
    const { code, stdout, entries } = await agent(['triage', '--via', 'all', '--faults', 'demo']);
    expect(code).toBe(0);
    expect(stdout.match(/ {3}done: 11 emails, 8 senders, reply r-/g)).toHaveLength(3);
    const retriesAt = (via: string, layer: string) =>
      entries.filter((e) => e.via === via && e.kind === 'attempt' && e.layer === layer && e.attempt > 1).length;
    // Direct: the agent's own client retried. Through MCP: the gateway did, and reported it.
    expect(retriesAt('api', 'api')).toBeGreaterThanOrEqual(3);
    expect(retriesAt('mcp-stdio', 'gateway')).toBeGreaterThanOrEqual(3);
    expect(retriesAt('mcp-http', 'gateway')).toBeGreaterThanOrEqual(3);
    expect(retriesAt('mcp-http', 'mcp-http')).toBe(0);
    expect(entries.filter((e) => e.kind === 'tool_call' && e.via === 'mcp-http').length).toBe(21);
    const waits = entries.filter((e) => e.via === 'api' && e.waitReason === 'retry_after');
    expect(waits.length).toBeGreaterThan(0);
    expect(stdout).toMatch(/Digest for 2026-06-10: 60 emails, 11 urgent\./);
    // The summary is a real table: headers with units, the gateway under each MCP path.
    expect(stdout).toMatch(/^ {2}layer +reqs +retries +failed +sent +recv +s +After s +calls +s$/m);
    expect(stdout).toMatch(/^mcp-stdio +21 +0 +0 +21 +\d+\.\d\d$/m);
    expect(stdout.match(/^ {2}gateway +\d+ +\d+ +\d+ +\d+ +\d+ +\d+\.\d\d +\d+\.\d\d$/gm)).toHaveLength(2);
    expect(stdout).not.toContain('(index)');
    expect(stdout).not.toContain("''");
  });

  it('stores the reply exactly once even when its response is lost, against a running API', async () => {
    const api = await runningApi();
    await api.faults([
      { method: 'POST', path: '/emails/{email_id}/reply', action: 'truncate' },
      { method: 'GET', path: '/emails', action: 'status', status: 503, times: 1 },
    ]);
    const direct = await agent(['triage', '--via', 'api', '--api-url', api.url], { TOY_API_KEY: api.key });
    expect(direct.code).toBe(0);
    expect(await api.replies('m-0115')).toHaveLength(1);
    // The faults really happened: the reply's first answer was lost and it was sent again with
    // the same key; the first GET /emails got its 503.
    const replyAttempts = (entries: typeof direct.entries, layer: string) =>
      entries.filter(
        (e) => e.kind === 'attempt' && e.layer === layer && e.method === 'POST' && /\/reply$/.test(e.path),
      );
    const sent = replyAttempts(direct.entries, 'api');
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent[0]?.errorType).toBe('connection_error');
    expect(sent.at(-1)?.errorType).toBeNull();
    expect(new Set(sent.map((e) => e.idempotencyKey)).size).toBe(1);
    expect(sent[0]?.idempotencyKey).toBeTruthy();
    expect(direct.entries.some((e) => e.kind === 'attempt' && e.path === '/emails' && e.status === 503)).toBe(true);
    await api.faults([{ method: 'POST', path: '/emails/{email_id}/reply', action: 'truncate' }]);
    const viaGateway = await agent(['triage', '--via', 'mcp-stdio', '--api-url', api.url], { TOY_API_KEY: api.key });
    expect(viaGateway.code).toBe(0);
    expect(await api.replies('m-0115')).toHaveLength(2);
    // The gateway's attempts, as it reported them in _meta: the first answer lost, then a success.
    const relayed = viaGateway.entries.filter(
      (e) => e.kind === 'attempt' && e.layer === 'gateway' && e.tool === 'reply_to_email',
    );
    expect(relayed.map((e) => [e.attempt, e.errorType])).toEqual([
      [1, 'connection_error'],
      [2, null],
    ]);
  });

  it('stops with exit code 3 when --max-requests is reached, and keeps the ledger so far', async () => {
    const { code, stdout, entries } = await agent(['triage', '--via', 'api', '--max-requests', '4']);
    expect(code).toBe(3);
    expect(stdout).toMatch(/stopped: GET \/[^:]+: budget exceeded: 4 of 4 attempts used/);
    expect(entries.filter((e) => e.kind === 'attempt')).toHaveLength(4);
  });

  it('prints the wire with --trace, and the key appears in no output and no ledger line', async () => {
    const api = await runningApi();
    const { code, stdout, stderr, entries } = await agent(['triage', '--via', 'all', '--api-url', api.url, '--trace'], {
      TOY_API_KEY: api.key,
    });
    // mcp-http needs --mcp-url against a running stack: a clear usage error, after nothing ran.
    expect(code).toBe(2);
    expect(stderr).toMatch(/--via mcp-http against a running stack needs --mcp-url/);
    const run = await agent(['triage', '--via', 'mcp-stdio', '--api-url', api.url, '--trace'], {
      TOY_API_KEY: api.key,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^mcp {3}-> \{"method":"tools\/call","params":\{"name":"list_emails"/m);
    expect(run.stderr).toMatch(/^mcp {3}-> \{.*"method":"notifications\/initialized"/m);
    const direct = await agent(['triage', '--via', 'api', '--api-url', api.url, '--trace'], { TOY_API_KEY: api.key });
    expect(direct.stderr).toMatch(/^http {2}api GET \/emails #1 -> 200 /m);
    for (const text of [
      stdout,
      stderr,
      run.stdout,
      run.stderr,
      direct.stdout,
      direct.stderr,
      JSON.stringify(entries),
      JSON.stringify(run.entries),
      JSON.stringify(direct.entries),
    ]) {
      expect(text).not.toContain(api.key);
    }
  });

  it('leaks no secret: the full task with --trace, the servers logging at debug level, and every span exported', async () => {
    const apiKey = `key-${randomBytes(16).toString('hex')}`;
    const token = `tok-${randomBytes(16).toString('hex')}`;
    const ledger = join(tmpdir(), `secrets-${randomBytes(4).toString('hex')}.jsonl`);
    // Spans of the agent, its embedded API and gateway, and the gateway it spawns over stdio.
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const run = await runAgent(['triage', '--via', 'all', '--faults', 'demo', '--trace', '--ledger', ledger], {
      TOY_API_KEY: apiKey,
      MCP_GATEWAY_TOKEN: token,
      LOG_LEVEL: 'debug',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    });
    expect(run.code).toBe(0);
    const traceId = /^trace: ([0-9a-f]{32})$/m.exec(run.stdout)?.[1];
    await receiver.waitFor((spans) => new Set(spans.map((s) => s.service)).size === 2);
    expect(new Set(receiver.spans.map((s) => s.service))).toEqual(new Set(['agent', 'mcp-gateway']));
    expect(receiver.spans.filter((s) => s.traceId === traceId).length).toBeGreaterThan(100);
    expect(receiver.spans.some((s) => s.scope === '@fastify/otel' && s.traceId === traceId)).toBe(true);
    // The logs are really there: the API's and the gateway's request logs (pino), and the wire.
    expect(run.stderr.match(/"msg":"incoming request"/g)?.length ?? 0).toBeGreaterThan(20);
    expect(run.stderr).toMatch(/^http {2}mcp-http POST \/mcp/m);
    const everything = [run.stdout, run.stderr, readFileSync(ledger, 'utf8'), ...receiver.bodies];
    for (const text of everything) {
      expect(text).not.toContain(apiKey);
      expect(text).not.toContain(token);
      // Nor their base64 (a Basic header) or a long prefix of them.
      expect(text).not.toContain(Buffer.from(apiKey).toString('base64'));
      expect(text).not.toContain(apiKey.slice(0, 16));
      expect(text).not.toContain(token.slice(0, 16));
    }
  });

  it('never prints the gateway token, with --trace against a running gateway', async () => {
    const api = await runningApi();
    const { createGateway, serveHttp } = await import('@agentwire/mcp-gateway');
    const token = `gw-${randomBytes(12).toString('hex')}`;
    const gateway = await createGateway({ upstreamUrl: api.url, upstreamApiKey: api.key });
    const http = await serveHttp(gateway, { host: '127.0.0.1', port: 0, token, allowedOrigins: [] });
    cleanups.push(async () => {
      await http.close();
      await gateway.close();
    });
    const run = await agent(
      ['triage', '--via', 'mcp-http', '--api-url', api.url, '--mcp-url', `${http.url}/mcp`, '--trace'],
      {
        TOY_API_KEY: api.key,
        MCP_GATEWAY_TOKEN: token,
      },
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^http {2}mcp-http POST \/mcp #1 -> 200 /m);
    expect(run.stderr).toMatch(/^wire {2}-> POST \/mcp \{.*authorization: \[redacted\]/m);
    // With a session (the legacy revisions), its id is a bearer credential for the session:
    // only a short hash of it is printed.
    const legacy = await agent(
      [
        'triage',
        '--via',
        'mcp-http',
        '--api-url',
        api.url,
        '--mcp-url',
        `${http.url}/mcp`,
        '--trace',
        '--mcp-mode',
        'legacy',
      ],
      { TOY_API_KEY: api.key, MCP_GATEWAY_TOKEN: token },
    );
    expect(legacy.code).toBe(0);
    expect(legacy.stderr).toMatch(/^wire {2}<- 200 \{.*mcp-session-id: sha256:[0-9a-f]{8}\b/m);
    expect(legacy.stderr).toMatch(/^wire {2}-> POST \/mcp \{.*mcp-session-id: sha256:[0-9a-f]{8}\b/m);
    expect(legacy.stderr).not.toMatch(/mcp-session-id: (?!sha256:[0-9a-f]{8}\b)/);
    // Nor do the servers' /metrics after those runs: labels are templates and fixed words.
    const gatewayMetrics = await (
      await fetch(`${http.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    ).text();
    const apiMetrics = await (
      await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${api.key}` } })
    ).text();
    expect(gatewayMetrics).toMatch(/^mcp_gateway_tool_calls_total\{tool="office_days",outcome="ok"\} \d+$/m);
    expect(apiMetrics).toMatch(/^toy_api_requests_total\{route="\/emails",method="GET",status="200"\} \d+$/m);
    for (const text of [run.stdout, run.stderr, JSON.stringify(run.entries), gatewayMetrics, apiMetrics]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(api.key);
      expect(text).not.toContain(token.slice(0, 12));
      expect(text).not.toContain(api.key.slice(0, 12));
    }
  });

  it('prints one JSON document with --json, for scripts', async () => {
    const { code, stdout } = await agent(['triage', '--via', 'api', '--json', '--max-requests', '3']);
    expect(code).toBe(3);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ exitCode: 3, summary: [{ via: 'api', layer: 'api', requests: 3 }] });
    expect(report.stoppedBy).toMatch(/budget exceeded/);
  });

  it('stops with exit code 3 when --max-bytes is reached, over MCP too', async () => {
    const { code, stdout } = await agent(['triage', '--via', 'mcp-http', '--max-bytes', '3000']);
    expect(code).toBe(3);
    expect(stdout).toMatch(/budget exceeded/);
  });

  it('stops with exit code 3 at --max-bytes over stdio too, counting what the gateway moved', async () => {
    const { code, stdout, entries } = await agent(['triage', '--via', 'mcp-stdio', '--max-bytes', '3000']);
    expect(code).toBe(3);
    expect(stdout).toMatch(/budget exceeded: \d+ of 3000 bytes used/);
    expect(entries.length).toBeGreaterThan(0);
  });

  it('stops with exit code 4 at the deadline through the gateway, and the unanswered call is in the ledger', async () => {
    // The email list never answers, so the deadline passes inside that tool call whatever the
    // machine's speed; 12 s leaves start-up room on a loaded machine (6 s once did not, in CI).
    const file = join(tmpdir(), `faults-${randomBytes(4).toString('hex')}.json`);
    writeFileSync(file, JSON.stringify({ rules: [{ method: 'GET', path: '/emails', action: 'hang', times: 100 }] }));
    const { code, stdout, entries } = await agent([
      'triage',
      '--via',
      'mcp-http',
      '--faults',
      file,
      '--deadline',
      '12s',
    ]);
    expect(code).toBe(4);
    expect(stdout).toMatch(/stopped \(exit 4\): /);
    expect(entries.some((e) => e.kind === 'tool_call' && e.isError)).toBe(true);
  });

  it('stops with exit code 4 when the deadline passes, instead of waiting past it', async () => {
    const { code, stdout } = await agent(['triage', '--via', 'api', '--faults', 'demo', '--deadline', '700ms']);
    expect(code).toBe(4);
    expect(stdout).toMatch(/stopped: .*deadline/);
  });

  it('stops with exit code 1 when a step fails for good', async () => {
    const file = join(tmpdir(), `faults-${randomBytes(4).toString('hex')}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        rules: [{ method: 'GET', path: '/employees/{employee_id}', action: 'status', status: 403, times: 100 }],
      }),
    );
    const { code, stdout } = await agent(['triage', '--via', 'mcp-stdio', '--faults', file]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/stopped: get_employee: upstream answered HTTP 403 permission_error/);
  });

  it('stops with exit code 1 at an API whose cursor never ends, after 100 pages, or that hands back the same cursor', async () => {
    const pages: string[] = [];
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const cursor = url.searchParams.get('cursor') ?? '';
      pages.push(cursor);
      const next = url.searchParams.get('date') === '2026-06-11' ? 'same' : `c-${pages.length}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [], next_cursor: next }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const endless = await runAgent(['triage', '--via', 'api', '--api-url', apiUrl], { TOY_API_KEY: 'k' });
      expect(endless.code).toBe(1);
      expect(endless.stdout).toMatch(
        /stopped: the API still had more urgent emails after 100 pages, the most the task reads \(a cursor that never ends\?\)/,
      );
      expect(pages).toHaveLength(100);
      const same = await runAgent(['triage', '--via', 'api', '--api-url', apiUrl, '--date', '2026-06-11'], {
        TOY_API_KEY: 'k',
      });
      expect(same.code).toBe(1);
      expect(same.stdout).toMatch(
        /stopped: the API gave the cursor it was sent as the next one \(same\): it would page for ever/,
      );
      expect(pages).toHaveLength(102);
    } finally {
      server.close();
    }
  });

  it('exits 2 with a clear message for bad arguments', async () => {
    for (const [args, message] of [
      [
        ['triage', '--via', 'carrier-pigeon'],
        /--via must be one of api, mcp-stdio, mcp-http, all; got 'carrier-pigeon'/,
      ],
      [['triage', '--date', '10/06/2026'], /--date must be YYYY-MM-DD, got '10\/06\/2026'/],
      [['triage', '--deadline', 'soon'], /--deadline must look like 20s, 1500ms or 2m, got 'soon'/],
      [['triage', '--max-requests', '0'], /--max-requests must be a whole number of at least 1, got '0'/],
      [['triage', '--faults', '/no/such/file.json'], /--faults must be demo, none or a JSON file/],
      [['triage', '--mcp-mode', 'v3'], /--mcp-mode must be auto or legacy, got 'v3'/],
      [['triage', '--verbose'], /Unknown option '--verbose'/],
      [
        ['triage', '--via', 'mcp-http', '--mcp-url', 'http://127.0.0.1:1/mcp'],
        /--mcp-url names a running gateway; triage runs on a running stack with its API too: give --api-url/,
      ],
      [['fly'], /unknown command 'fly'/],
    ] as const) {
      const { code, stderr } = await agent([...args]);
      expect({ args, code }).toEqual({ args, code: 2 });
      expect(stderr).toMatch(message);
    }
  });
  it('prints the usage for --help or -h after any command, and exits 0', async () => {
    for (const args of [['triage', '--help'], ['tools', '--help'], ['call', 'x', '-h'], ['-h']]) {
      const { code, stdout } = await agent(args);
      expect({ args, code }).toEqual({ args, code: 0 });
      expect(stdout).toMatch(/^usage: agent tools/);
      expect(stdout).toContain('5 the signed-in user may not do a step');
    }
  });

  it('takes the default path from AGENTWIRE_VIA, and names the variable when its value is wrong', async () => {
    const typo = await runAgent(['triage'], { MCP_GATEWAY_AUTH: 'bogus' });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/MCP_GATEWAY_AUTH for the embedded stack must be token or oauth, got 'bogus'/);
    const wrong = await runAgent(['triage'], { AGENTWIRE_VIA: 'smoke-signals' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/AGENTWIRE_VIA must be one of api, mcp-stdio, mcp-http, all; got 'smoke-signals'/);
    // The variable picked mcp-http: against a running API without --mcp-url that is a usage error.
    const http = await runAgent(['triage', '--api-url', 'http://127.0.0.1:9'], {
      AGENTWIRE_VIA: 'mcp-http',
      TOY_API_KEY: 'not-used-here',
    });
    expect(http.code).toBe(2);
    expect(http.stderr).toMatch(/--via mcp-http against a running stack needs --mcp-url/);
    // The flag wins over the variable.
    const flag = await runAgent(['triage', '--via', 'nope'], { AGENTWIRE_VIA: 'all' });
    expect(flag.stderr).toMatch(/--via must be one of/);
  });
});

describe('agent triage on a terminal', () => {
  it('shows a spinner with the elapsed time while a step waits, and none when piped', async () => {
    // `script` gives the command a real terminal.
    const child = spawn(
      'script',
      ['-qec', `${process.execPath} ${AGENT_BIN} triage --via api --faults demo`, '/dev/null'],
      {
        env: { PATH: process.env.PATH ?? '', TERM: 'xterm' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let tty = '';
    child.stdout.on('data', (c: Buffer) => {
      tty += c.toString();
    });
    await once(child, 'exit');
    expect(tty).toMatch(/⠋ urgent emails of 2026-06-10 \d+\.\d s/);
    const piped = await agent(['triage', '--via', 'api', '--faults', 'demo']);
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  });
});
