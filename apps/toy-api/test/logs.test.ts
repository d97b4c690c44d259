import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { startApi } from './support/toy-api.js';

describe('logs', () => {
  it('are JSON lines with request ids, and never contain a key or the Authorization header', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const api = await startApi('memory', { logger: { level: 'trace', stream } });
    await fetch(`${api.url}/employees`, { headers: { authorization: `Bearer ${api.key}` } });
    await fetch(`${api.url}/employees`, { headers: { 'x-api-key': api.readKey } });
    await fetch(`${api.url}/employees`, { headers: { authorization: 'Bearer wrong-key-value' } });
    await api.json('/emails/m-0001/reply', { method: 'POST', body: { body: 'hi' } });
    await api.json('/employees?limit=999');
    await api.app.close();

    expect(lines.length).toBeGreaterThan(8);
    const records = lines.map((line) => JSON.parse(line) as { reqId?: string; msg?: string });
    expect(records.filter((r) => r.reqId?.startsWith('req_')).length).toBeGreaterThan(8);
    // Request logs carry the headers, so the redaction is what keeps the keys out.
    const incoming = records.filter((r) => r.msg === 'incoming request') as Array<{
      req: { headers: Record<string, string> };
    }>;
    expect(incoming.length).toBeGreaterThan(3);
    expect(incoming[0]?.req.headers.authorization).toBe('[Redacted]');
    expect(incoming[1]?.req.headers['x-api-key']).toBe('[Redacted]');
    expect(incoming.some((r) => typeof r.req.headers['user-agent'] === 'string')).toBe(true);
    const all = lines.join('\n');
    expect(all).not.toContain(api.key);
    expect(all).not.toContain(api.readKey);
    expect(all).not.toContain('wrong-key-value');
    expect(all.toLowerCase()).not.toContain('bearer');
  });
});
