// `agent raw` sends its bytes where the URL says, as the URL says: TLS for https (so the key in
// the bytes never crosses in clear), and the scheme's port when the URL names none.
import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { rawTarget } from '../src/labs/lab1-http.js';
import { runAgent } from './support/run-agent.js';

describe('agent raw and its target', () => {
  it('takes the port of the scheme when the URL names none, and refuses other schemes', () => {
    expect(rawTarget('http://api.example')).toEqual({ secure: false, host: 'api.example', port: 80 });
    expect(rawTarget('https://api.example')).toEqual({ secure: true, host: 'api.example', port: 443 });
    expect(rawTarget('https://[::1]:8443/x')).toEqual({ secure: true, host: '::1', port: 8443 });
    expect(() => rawTarget('ftp://api.example')).toThrow(/http:\/\/ or https:\/\/ URL, got 'ftp:'/);
  });

  it('speaks TLS to an https URL: the first bytes are a TLS handshake, never the request and its key', async () => {
    const key = `raw-key-${'s'.repeat(16)}`;
    let received: Buffer = Buffer.alloc(0);
    const server = createServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        received = chunk;
        socket.destroy();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const port = (server.address() as { port: number }).port;
      const { code, stderr } = await runAgent(
        ['raw', '-', '--api-url', `https://127.0.0.1:${port}`],
        { TOY_API_KEY: key },
        'GET /employees HTTP/1.1\r\nHost: {{HOST}}\r\nAuthorization: Bearer {{API_KEY}}\r\n\r\n',
      );
      expect(received[0]).toBe(0x16); // a TLS record: handshake
      expect(received.includes(key)).toBe(false);
      expect(received.includes('GET /employees')).toBe(false);
      expect(code).not.toBe(0);
      expect(stderr).toMatch(/^agent: /m);
    } finally {
      server.close();
    }
  });
});
