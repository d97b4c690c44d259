// The stack as containers, built from this repository and driven for real: curl against the
// published ports, the official MCP client over Streamable HTTP, and the agent image's task
// through the API and the gateway (over HTTP and over stdio inside the agent's container).
import { execFile, spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setup as redisSetup, teardown as redisTeardown } from '../../test-support/redis-server.js';
import {
  type ContainerStack,
  REDIS_IMAGE,
  REPO_ROOT,
  runAgentContainer,
  startContainerStack,
  stopAndInspect,
} from './support/container-stack.js';

const run = promisify(execFile);
let stack: ContainerStack;

beforeAll(async () => {
  stack = await startContainerStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** curl, for real: status, headers and body of one request. */
async function curl(args: string[]): Promise<{ status: number; headers: string; body: string }> {
  const { stdout } = await run('curl', ['-sS', '-i', '--max-time', '10', ...args]);
  const split = stdout.indexOf('\r\n\r\n');
  const headers = stdout.slice(0, split);
  return { status: Number(/^HTTP\/[\d.]+ (\d{3})/.exec(headers)?.[1]), headers, body: stdout.slice(split + 4) };
}

function envelope(body: string): { type: string; message: string } {
  const parsed = JSON.parse(body) as { error: { type: string; message: string } };
  expect(Object.keys(parsed)).toEqual(['error']);
  return parsed.error;
}

describe('the toy API container', () => {
  it('answers health without auth, and the envelope for every error, with curl', async () => {
    const health = await curl([`${stack.apiUrl}/health`]);
    expect(health.status).toBe(200);

    const noKey = await curl([`${stack.apiUrl}/emails`]);
    expect(noKey.status).toBe(401);
    expect(envelope(noKey.body).type).toBe('authentication_error');

    const wrongKey = await curl(['-H', 'Authorization: Bearer not-the-key', `${stack.apiUrl}/emails`]);
    expect(wrongKey.status).toBe(401);
    expect(envelope(wrongKey.body).type).toBe('authentication_error');
    expect(wrongKey.body).not.toContain('not-the-key');

    const auth = ['-H', `Authorization: Bearer ${stack.apiKey}`];
    const missing = await curl([...auth, `${stack.apiUrl}/nope`]);
    expect(missing.status).toBe(404);
    expect(envelope(missing.body).type).toBe('not_found_error');

    const json = ['-H', 'Content-Type: application/json'];
    const badDate = await curl([...auth, ...json, '-d', '{"date":"June 10"}', `${stack.apiUrl}/digest`]);
    expect(badDate.status).toBe(400);
    expect(envelope(badDate.body)).toEqual({
      type: 'invalid_request_error',
      message: "$.date: 'June 10' is not a date as YYYY-MM-DD",
    });

    const malformed = await curl([...auth, ...json, '-d', '{"date":', `${stack.apiUrl}/digest`]);
    expect(malformed.status).toBe(400);
    expect(envelope(malformed.body).type).toBe('invalid_request_error');

    const ok = await curl([...auth, `${stack.apiUrl}/employees?limit=2`]);
    expect(ok.status).toBe(200);
    expect(ok.headers).toMatch(/^request-id: /im);
  });

  it("prints the lecture's status-code table with scripts/status-table.sh", async () => {
    const { stdout } = await run('bash', [`${REPO_ROOT}/scripts/status-table.sh`, stack.apiUrl], {
      env: { PATH: process.env.PATH ?? '', TOY_API_KEY: stack.apiKey },
    });
    const rows = stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(/\s{2,}/).slice(0, 3));
    expect(rows).toEqual([
      ['GET /health (no auth needed)', '200', '-'],
      ['GET /emails without a token', '401', 'authentication_error'],
      ['GET /nope (no such path)', '404', 'not_found_error'],
      ['POST /digest without date', '400', 'invalid_request_error'],
      ['POST /digest with a bad date', '400', 'invalid_request_error'],
      ['GET /flaky (temporary failure)', '503', 'api_error'],
      ['GET /flaky again', '200', '-'],
    ]);
    expect(stdout).not.toContain(stack.apiKey);
  });
});

describe('the gateway container', () => {
  it('refuses requests without the token, and other hosts, with curl', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const headers = ['-H', 'Content-Type: application/json', '-H', 'Accept: application/json, text/event-stream'];
    const noToken = await curl([...headers, '-d', body, stack.mcpUrl]);
    expect(noToken.status).toBe(401);
    expect(noToken.headers).toMatch(/^www-authenticate: Bearer/im);
    expect(JSON.parse(noToken.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });

    const rebinding = await curl([
      ...headers,
      '-H',
      `Authorization: Bearer ${stack.gatewayToken}`,
      '-H',
      'Host: evil.example',
      '-d',
      body,
      stack.mcpUrl,
    ]);
    expect(rebinding.status).toBe(403);
    expect(rebinding.body).toContain("Host 'evil.example' is not allowed");
  });

  it('serves the official MCP client over Streamable HTTP, 2026-07-28 and the session-based revisions', async () => {
    for (const mode of ['auto', 'legacy'] as const) {
      const client = new Client({ name: 'agentwire-containers', version: '1.0.0' }, { versionNegotiation: { mode } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
          requestInit: { headers: { Authorization: `Bearer ${stack.gatewayToken}` } },
        }),
      );
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(
          expect.arrayContaining(['list_employees', 'office_days', 'create_digest']),
        );
        const result = await client.callTool({ name: 'get_employee', arguments: { employee_id: 'e-07' } });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toMatchObject({ id: 'e-07', name: 'Gus Moreau' });
        const bad = await client.callTool({ name: 'get_employee', arguments: { employee_id: 'e-99' } });
        expect(bad.isError).toBe(true);
        expect(JSON.stringify(bad.content)).toContain('not_found_error');
      } finally {
        await client.close();
      }
    }
    // The session-based revision kept its session in the shared Redis.
    const keys = await stack.redis.exec([
      'sh',
      '-c',
      'REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli --scan --pattern "mcp-gateway:*"',
    ]);
    expect(keys.output).toMatch(/mcp-gateway:/);
  });
});

describe('the agent image', () => {
  it('runs the task through the API, the gateway over HTTP, and the gateway over stdio', async () => {
    const { code, stdout, stderr } = await runAgentContainer(stack, ['triage', '--via', 'all', '--json']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as {
      exitCode: number;
      stoppedBy: string | null;
      summary: Array<{ via: string; layer: string; requests: number }>;
    };
    expect(result.exitCode).toBe(0);
    expect(result.stoppedBy).toBeNull();
    expect(new Set(result.summary.map((r) => r.via))).toEqual(new Set(['api', 'mcp-stdio', 'mcp-http']));
    for (const row of result.summary) expect(row.requests).toBeGreaterThan(0);
    // The replies the three runs stored are in the API (and so in Redis).
    const replies = await curl([
      '-H',
      `Authorization: Bearer ${stack.apiKey}`,
      `${stack.apiUrl}/emails/m-0115/replies`,
    ]);
    expect(replies.status).toBe(200);
    expect((JSON.parse(replies.body) as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(3);
    const stored = await stack.redis.exec([
      'sh',
      '-c',
      'REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli --scan --pattern "toy-api:*"',
    ]);
    expect(stored.output).toMatch(/toy-api:/);
    for (const secret of [stack.apiKey, stack.gatewayToken, stack.redisPassword]) {
      expect(stdout).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
  });

  it('takes its default path from AGENTWIRE_VIA, as the compose file sets it', async () => {
    const { code, stdout } = await runAgentContainer(stack, ['triage', '--json'], { AGENTWIRE_VIA: 'mcp-http' });
    expect(code).toBe(0);
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as { summary: Array<{ via: string }> };
    expect(new Set(result.summary.map((r) => r.via))).toEqual(new Set(['mcp-http']));
  });
});

describe('Redis in the stack', () => {
  it('takes no command without the password, refuses writes at its limit rather than evicting, and its password shows in no command line or log', async () => {
    const anonymous = await stack.redis.exec(['redis-cli', 'set', 'x', '1']);
    expect(anonymous.output).toMatch(/NOAUTH/);
    const policy = await stack.redis.exec([
      'sh',
      '-c',
      'REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli config get maxmemory-policy',
    ]);
    expect(policy.output.trim().split('\n')).toEqual(['maxmemory-policy', 'noeviction']);
    const cmdline = await stack.redis.exec(['cat', '/proc/1/cmdline']);
    expect(cmdline.output).toContain('redis-server');
    expect(cmdline.output).not.toContain(stack.redisPassword);
    for (const container of [stack.redis, stack.api, stack.gateway]) {
      const logs = spawnSync('docker', ['logs', container.getId()], { encoding: 'utf8' });
      expect(logs.status).toBe(0);
      expect(`${logs.stdout}${logs.stderr}`).not.toContain(stack.redisPassword);
    }
  });
});

describe('the containers themselves', () => {
  it('run as a non-root user and stop cleanly on SIGTERM', async () => {
    for (const container of [stack.api, stack.gateway]) {
      const id = await container.exec(['id', '-u']);
      expect(id.output.trim()).not.toBe('0');
    }
    // Last, since it stops the gateway: a clean exit (0) means the SIGTERM handler ran; the
    // kill after the 10 s timeout would give 137.
    const gateway = await stopAndInspect(stack.gateway);
    expect(gateway).toEqual({ exitCode: 0, oomKilled: false, user: 'node' });
    const api = await stopAndInspect(stack.api);
    expect(api).toEqual({ exitCode: 0, oomKilled: false, user: 'node' });
  });
});

describe("the unit tests' Redis", () => {
  it('is a container when REDIS_URL is not set and Docker is available', async () => {
    const saved = process.env.REDIS_URL;
    delete process.env.REDIS_URL;
    try {
      await redisSetup();
      const url = new URL(process.env.REDIS_URL ?? '');
      const pong = await new Promise<string>((resolve, reject) => {
        const socket = createConnection({ host: url.hostname, port: Number(url.port) }, () => socket.write('PING\r\n'));
        socket.once('data', (chunk) => {
          resolve(chunk.toString());
          socket.end();
        });
        socket.once('error', reject);
      });
      expect(pong).toBe('+PONG\r\n');
      // And it is a container of the Redis image, published on that port.
      const { stdout } = await run('docker', ['ps', '--filter', `ancestor=${REDIS_IMAGE}`, '--format', '{{.Ports}}']);
      expect(stdout).toContain(`:${url.port}->6379/tcp`);
    } finally {
      await redisTeardown();
      if (saved === undefined) delete process.env.REDIS_URL;
      else process.env.REDIS_URL = saved;
    }
  });
});

describe('pnpm test with a Docker engine', () => {
  it('chooses a Redis container before a redis-server, says so in one line, and removes it at the end', async () => {
    const { REDIS_URL: _unset, ...env } = process.env;
    const { stdout } = await run(process.execPath, [`${REPO_ROOT}/scripts/test.mjs`, '--check', '--no-install'], {
      env,
    });
    const line = /^pnpm test: Redis: a Redis container \((.+)\) on (.+):(\d+) · Chromium: /.exec(stdout);
    expect(line, stdout).not.toBeNull();
    expect(line?.[1]).toBe(REDIS_IMAGE);
    const { stdout: left } = await run('docker', ['ps', '--filter', `publish=${line?.[3]}`, '--format', '{{.ID}}']);
    expect(left.trim()).toBe('');
  });
});
