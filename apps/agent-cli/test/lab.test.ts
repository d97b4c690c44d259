import { describe, expect, it } from 'vitest';
import { runAgent } from './support/run-agent.js';

const lab = (n: string) => runAgent(['lab', n]);

describe('agent lab', () => {
  it('1: a raw request, GET vs POST, the status-code table, the short Content-Length', async () => {
    const { code, stdout } = await lab('1');
    expect(code).toBe(0);
    expect(stdout).toMatch(/HTTP\/1\.1 200 OK\n/);
    expect(stdout).toMatch(/GET \/emails without a token +401 +authentication_error +fix the request/);
    expect(stdout).toMatch(/POST \/digest without date +400 +invalid_request_error/);
    expect(stdout).toMatch(/GET \/flaky, a temporary fault +503 +api_error +retry \(with backoff\)/);
    expect(stdout).toMatch(/-> body is not valid JSON: Unterminated string/);
  });

  it('2: JSON round trips and the validator messages', async () => {
    const { code, stdout } = await lab('2');
    expect(code).toBe(0);
    expect(stdout).toMatch(/NaN +null +CHANGED -> null/);
    expect(stdout).toMatch(/\{"limit": "2"\} +a number written as a string +\$\.limit: expected integer, got string/);
    expect(stdout).toMatch(/\{"limit": true\} +true is not an integer +\$\.limit: expected integer, got boolean/);
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
  });

  it('4: the handshake, the two kinds of errors, stdio, the session table, the tools with tokens', async () => {
    const { code, stdout } = await lab('4');
    expect(code).toBe(0);
    expect(stdout).toMatch(/2 notifications\/initialized +202/);
    expect(stdout).toMatch(/send_email\(\{\}\) +no such tool +protocol error -32602/);
    expect(stdout).toMatch(/valid, but no such employee +result, isError=true/);
    expect(stdout).toMatch(/tools\/list without Mcp-Session-Id +400/);
    expect(stdout).toMatch(/unknown session id +404/);
    expect(stdout).toMatch(/evil\.example +403/);
    expect(stdout).toMatch(/DELETE the session +204/);
    expect(stdout).toMatch(/tools\/list on the ended session +404/);
    expect(stdout).toContain('office_days(employee_id: string)');
  });

  it('traces the clients of lab 3 with --trace', async () => {
    const { code, stderr } = await runAgent(['lab', '3', '--trace']);
    expect(code).toBe(0);
    expect(stderr).toMatch(/^http {2}http GET \/flaky #2 after 500 ms backoff -> 503 api_error/m);
  });

  it('refuses a lab it does not have', async () => {
    const { code, stderr } = await lab('9');
    expect(code).toBe(2);
    expect(stderr).toMatch(/usage: agent lab 1\|2\|3\|4/);
  });
});
