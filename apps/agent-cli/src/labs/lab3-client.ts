// Lab 3 (lecture sections 5 and 6): auth, timeouts, retries with their waits, Retry-After, no
// retry on 404, SSE, and the ledger, measured with packages/http-client against the API.
import { HttpClient, isHttpClientError, Ledger } from '@agentwire/http-client';
import type { Stack } from '../embedded-stack.js';
import { describeHttp } from '../wire-trace.js';
import { table } from './table.js';

const outcome = async (p: Promise<{ status: number }>) => {
  try {
    return String((await p).status);
  } catch (error) {
    if (isHttpClientError(error)) return `${error.status ?? ''} ${error.type} (retryable: ${error.retryable})`.trim();
    throw error;
  }
};

export async function lab3(stack: Stack, print: (text: string) => void, trace = false): Promise<void> {
  // --trace: every client's attempts on stderr too.
  const watch = (ledger: Ledger) => {
    if (trace) ledger.on('entry', (e) => process.stderr.write(`${describeHttp(e)}\n`));
    return ledger;
  };
  const traced = () => (trace ? { ledger: watch(new Ledger()) } : {});
  const run = `lab3-${Date.now()}`;
  print('Demo 1: authentication\n');
  const anonymous = new HttpClient({ baseUrl: stack.apiUrl, maxRetries: 0, ...traced() });
  const wrong = new HttpClient({ baseUrl: stack.apiUrl, auth: { key: 'not-the-key' }, maxRetries: 0, ...traced() });
  const right = new HttpClient({ baseUrl: stack.apiUrl, auth: { key: stack.apiKey }, maxRetries: 0, ...traced() });
  print(
    table(
      ['client', 'result'],
      [
        ['no credentials', await outcome(anonymous.get('/emails'))],
        ['a wrong token', await outcome(wrong.get('/emails'))],
        ['the right token', await outcome(right.get('/emails', { query: { limit: 1 } }))],
      ],
    ),
  );

  print('\n\nDemo 2: timeouts (the server takes 0.4 s)\n');
  const rows: string[][] = [];
  for (const timeoutMs of [200, 1000]) {
    const client = new HttpClient({
      baseUrl: stack.apiUrl,
      auth: { key: stack.apiKey },
      timeoutMs,
      maxRetries: 0,
      ...traced(),
    });
    rows.push([`${timeoutMs / 1000} s`, '0.4 s', await outcome(client.get('/slow', { query: { ms: 400 } }))]);
  }
  print(table(['timeout', 'server needs', 'result'], rows));

  print('\n\nDemo 3: retries and backoff — GET /flaky?fail_times=2\n');
  const ledger = watch(new Ledger());
  const retrying = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger,
    backoff: { baseMs: 500, jitter: 0 },
  });
  await retrying.get('/flaky', { query: { fail_times: 2, run } });
  const attempts = ledger.attempts;
  print(
    table(
      ['attempt', 'status', 'what happened', 'waited before (s)'],
      attempts.map((a) => [a.attempt, a.status ?? '-', a.errorType ?? 'success', a.waitMs / 1000]),
    ),
  );
  print(
    `backoff waits: [${attempts
      .filter((a) => a.waitMs > 0)
      .map((a) => a.waitMs / 1000)
      .join(', ')}] (base 0.5 s * 2^k)`,
  );

  print('\n\nDemo 4: Retry-After — GET /limited from the 3rd call on\n');
  const limitedLedger = watch(new Ledger());
  const polite = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger: limitedLedger,
    maxRetries: 3,
  });
  for (let i = 0; i < 3; i++) await polite.get('/limited', { query: { run } });
  const waits = limitedLedger.attempts.filter((a) => a.waitReason === 'retry_after').map((a) => a.waitMs / 1000);
  print(
    `the server said HTTP 429 with Retry-After; the client waited [${waits.join(', ')}] s, as told, instead of its own backoff`,
  );

  print('\n\nDemo 5: no retry for a 404\n');
  const notFound = watch(new Ledger());
  const c404 = new HttpClient({ baseUrl: stack.apiUrl, auth: { key: stack.apiKey }, ledger: notFound });
  print(
    `GET /employees/e-99 -> ${await outcome(c404.get('/employees/e-99'))} after ${notFound.attempts.length} attempt: a 4xx will not get better by retrying`,
  );

  print('\n\nDemo 6: streaming (SSE) — first piece vs the whole digest\n');
  const started = performance.now();
  let first = 0;
  let pieces = 0;
  for await (const event of right.stream({
    method: 'POST',
    path: '/digest',
    json: { date: '2026-06-10', max_items: 3 },
    query: { interval_ms: 20 },
    idempotent: true,
  })) {
    if (event.event !== 'delta') continue;
    if (pieces++ === 0) first = performance.now() - started;
  }
  const total = performance.now() - started;
  print(
    table(
      ['', 'ms'],
      [
        ['first piece arrived after', Math.round(first)],
        [`all ${pieces} pieces after`, Math.round(total)],
      ],
    ),
  );

  print('\n\nDemo 7: the ledger of a small task (urgent emails -> senders -> digest, one fault)\n');
  const taskLedger = watch(new Ledger());
  const task = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger: taskLedger,
    backoff: { baseMs: 100 },
  });
  await task.get('/flaky', { query: { fail_times: 1, run: `${run}-task` } });
  const page = (await task.get('/emails', { query: { urgent: true, date: '2026-06-10', limit: 2 } })).data as {
    data: Array<{ from: string }>;
  };
  for (const email of page.data) await task.get(`/employees/${email.from}`);
  await task.post('/digest', { date: '2026-06-10', max_items: 3 });
  const totals = taskLedger.totals();
  print(
    table(
      ['metric', 'value'],
      [
        ['requests sent (retries included)', totals.requests],
        ['of which retries after a failure', totals.retries],
        ['response body bytes received', totals.bytesReceived],
        ['seconds spent in backoff', (totals.waitMs.backoff / 1000).toFixed(2)],
      ],
    ),
  );
  for (const c of [anonymous, wrong, right, retrying, polite, c404, task]) await c.close();
}
