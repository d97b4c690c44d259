// Every fetch from an authorization server is bounded in time and size, and the error says
// which bound it hit: a hanging server, one that stops half-way through its answer, and one
// that answers too much, each on loopback.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthServerUnavailableError, fetchJson } from '../src/fetch-json.js';

let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/silent') return; // never answers
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/half')
      res.write('{"issuer":'); // headers, then nothing more
    else if (req.url === '/large') res.end(JSON.stringify({ pad: 'x'.repeat(1_000) }));
    else res.end('{"issuer":"https://as.example"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('fetchJson', () => {
  const limits = { timeoutMs: 300, maxBytes: 512 };

  it('names the time limit when the server does not answer, or stops half-way', async () => {
    const silent = await fetchJson(`${base}/silent`, limits).catch((e: unknown) => e);
    expect(silent).toBeInstanceOf(AuthServerUnavailableError);
    expect((silent as Error).message).toBe(
      `${base}/silent did not answer within 300 ms, the time an authorization server is given for an answer`,
    );
    await expect(fetchJson(`${base}/half`, limits)).rejects.toThrow(
      `${base}/half did not finish its answer within 300 ms, the time an authorization server is given for an answer`,
    );
  });

  it('names the size limit when the answer is larger, and takes one that fits', async () => {
    await expect(fetchJson(`${base}/large`, limits)).rejects.toThrow(
      `${base}/large answered more than 512 bytes, the most read from an authorization server`,
    );
    expect(await fetchJson(`${base}/small`, limits)).toEqual({ issuer: 'https://as.example' });
  });
});
