// What one hostile request can cost the gateway: bounded work and a bounded answer.
import { once } from 'node:events';
import { maxHeaderSize } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { httpV1, startHttpGateway, startToyApi } from './support/stack.js';

describe('hostile callers', () => {
  it('answers a call with 10,000 unknown arguments with 20 problems and a count', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const { client } = await httpV1(gw);
    const args: Record<string, unknown> = { employee_id: 'e-05' };
    for (let i = 0; i < 10_000; i++) args[`extra_${i}`] = i;
    const result = (await client.callTool({ name: 'office_days', arguments: args })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(result.isError).toBe(true);
    const lines = result.content[0]?.text.split('\n') ?? [];
    expect(lines[0]).toBe('Invalid arguments for tool office_days:');
    expect(lines).toHaveLength(22);
    expect(lines.at(-1)).toBe('... and 9980 more');
    expect(JSON.stringify(result).length).toBeLessThan(22 * 400);
  });
});

/** Sends raw bytes on one connection; resolves with all it got when the server closes it. */
function raw(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let got = '';
    socket.on('data', (chunk) => {
      got += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
  });
}

describe('slow and malformed HTTP', () => {
  it('answers a body that stops arriving with a JSON-RPC 408, and closes the connection', async () => {
    const gw = await startHttpGateway(await startToyApi(), { requestTimeoutMs: 300 });
    const got = await raw(
      gw.url,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${gw.token}\r\n` +
        'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc"',
    );
    expect(got).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(got.split('\r\n\r\n')[1] ?? '')).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Request Timeout: the request did not arrive in full within 300 ms (REQUEST_TIMEOUT_MS)',
      },
    });
  });

  it("answers headers over Node's limit with a JSON-RPC 431 that names it", async () => {
    const gw = await startHttpGateway(await startToyApi());
    const got = await raw(
      gw.url,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'p'.repeat(maxHeaderSize)}\r\nContent-Length: 0\r\n\r\n`,
    );
    expect(got).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(JSON.parse(got.split('\r\n\r\n')[1] ?? '').error).toEqual({
      code: -32600,
      message: `Request header fields too large: at most ${maxHeaderSize} bytes of headers in all (Node's --max-http-header-size)`,
    });
  });

  it('answers a request without Host with a JSON-RPC 400, not a bare one', async () => {
    const gw = await startHttpGateway(await startToyApi());
    const got = await raw(gw.url, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(got).toContain('"message":"Bad Request: a Host header is required"');
  });

  it('closes an idle keep-alive connection after its 401', async () => {
    const gw = await startHttpGateway(await startToyApi(), { keepAliveTimeoutMs: 200 });
    const got = await raw(gw.url, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    expect(got).toMatch(/keep-alive/i);
  });

  it('refuses connections beyond the cap', async () => {
    const gw = await startHttpGateway(await startToyApi(), { maxConnections: 1 });
    const { hostname, port } = new URL(gw.url);
    const first = connect(Number(port), hostname);
    await once(first, 'connect');
    await expect.poll(() => gw.openConnections()).toBe(1);
    // The second is accepted by the kernel and dropped by the server at once, unanswered.
    const second = await raw(gw.url, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(second).toBe('');
    first.destroy();
  });
});
