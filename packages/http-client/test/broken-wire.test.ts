// The wire breaking the ways the toy API can break it on purpose (its fault rules): a connection
// closed without a byte, a chunked body whose chunk size is not a number, and a body that drips in
// slower than the attempt may wait. Each is an attempt's error of the kind the retry rules know,
// and a GET is tried again; a slow body within the timeout still arrives whole.
import { describe, expect, it } from 'vitest';
import { testClient } from './support/client.js';
import { startToyApi } from './support/servers.js';

async function setUp(rule: Record<string, unknown>, options: { timeoutMs?: number } = {}) {
  const api = await startToyApi();
  await api.setFaults({ rules: [{ method: 'GET', path: '/employees', ...rule }] });
  return testClient(api.url, api.key, options);
}

describe('a wire that breaks', () => {
  it('closed without a byte of an answer: a connection error, and the GET is tried again', async () => {
    const { http, ledger } = await setUp({ action: 'empty_reply' });
    const response = await http.get('/employees');
    expect(response.status).toBe(200);
    expect(ledger.attempts.map((a) => [a.status, a.errorType])).toEqual([
      [null, 'connection_error'],
      [200, null],
    ]);
  });

  it('a chunk size that is not a number: a connection error too, and the GET is tried again', async () => {
    const { http, ledger } = await setUp({ action: 'malformed_chunk' });
    const response = await http.get('/employees');
    expect(response.status).toBe(200);
    expect(ledger.attempts.map((a) => a.errorType)).toEqual(['connection_error', null]);
  });

  it('a body that drips in slower than the attempt timeout: a timeout, then the GET again', async () => {
    const { http, ledger } = await setUp({ action: 'drip', chunk_bytes: 64, delay_ms: 1_000 }, { timeoutMs: 300 });
    const response = await http.get('/employees');
    expect(response.status).toBe(200);
    expect(ledger.attempts.map((a) => [a.status, a.errorType])).toEqual([
      [200, 'timeout_error'],
      [200, null],
    ]);
    // The first attempt got its head and the first chunk, no more.
    expect(ledger.attempts[0]?.bytesReceived).toBe(64);
  });

  it('a body that drips within the timeout arrives whole, and says what was injected (Server-Timing)', async () => {
    const { http, ledger } = await setUp({ action: 'drip', chunk_bytes: 512, delay_ms: 5 }, { timeoutMs: 10_000 });
    const dripped = await http.get('/employees');
    expect(ledger.attempts).toHaveLength(1);
    expect(dripped.headers['server-timing']).toBe('fault;desc="drip 512 bytes every 5 ms"');
    expect(dripped.data).toEqual((await http.get('/employees')).data);
  });
});
