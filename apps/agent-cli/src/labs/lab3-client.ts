// Lab 3 (lecture sections 5 and 6): auth, timeouts, retries with their waits, Retry-After, no
// retry on 404, an answer lost and replayed by its idempotency key, SSE (lab3-streams.ts), the
// ledger, a write deduped by the gateway, and a sick upstream (lab3-sick.ts), measured with
// packages/http-client against the API.
import { HttpClient, isHttpClientError, Ledger } from '@agentwire/http-client';
import type { Stack } from '../embedded-stack.js';
import { installFaults } from '../faults.js';
import { printError } from '../print.js';
import { describeHttp } from '../wire-trace.js';
import type { LabReport } from './lab-report.js';
import { sickUpstream } from './lab3-sick.js';
import { streamDemos } from './lab3-streams.js';

const outcome = async (p: Promise<{ status: number }>) => {
  try {
    return String((await p).status);
  } catch (error) {
    if (isHttpClientError(error)) return `${error.status ?? ''} ${error.type} (retryable: ${error.retryable})`.trim();
    throw error;
  }
};

export async function lab3(stack: Stack, report: LabReport, trace = false, noKey = false): Promise<void> {
  // --trace: every client's attempts on stderr too.
  const watch = (ledger: Ledger) => {
    if (trace) ledger.on('entry', (e) => printError(`${describeHttp(e)}\n`));
    return ledger;
  };
  const traced = () => (trace ? { ledger: watch(new Ledger()) } : {});
  const run = `lab3-${Date.now()}`;
  report.demo('authentication');
  const anonymous = new HttpClient({ baseUrl: stack.apiUrl, maxRetries: 0, ...traced() });
  const wrong = new HttpClient({ baseUrl: stack.apiUrl, auth: { key: 'not-the-key' }, maxRetries: 0, ...traced() });
  const right = new HttpClient({ baseUrl: stack.apiUrl, auth: { key: stack.apiKey }, maxRetries: 0, ...traced() });
  report.table(
    ['client', 'result'],
    [
      ['no credentials', await outcome(anonymous.get('/emails'))],
      ['a wrong token', await outcome(wrong.get('/emails'))],
      ['the right token', await outcome(right.get('/emails', { query: { limit: 1 } }))],
    ],
  );

  report.demo('timeouts (the server takes 0.4 s)');
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
  report.table(['timeout', 'server needs', 'result'], rows);

  report.demo('retries and backoff: GET /flaky?fail_times=2');
  const ledger = watch(new Ledger());
  const retrying = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger,
    backoff: { baseMs: 500, jitter: 0 },
  });
  await retrying.get('/flaky', { query: { fail_times: 2, run } });
  const attempts = ledger.attempts;
  report.table(
    ['attempt', 'status', 'what happened', 'waited before (s)'],
    attempts.map((a) => [a.attempt, a.status ?? null, a.errorType ?? 'success', a.waitMs / 1000]),
  );
  report.note(
    `backoff waits: [${attempts
      .filter((a) => a.waitMs > 0)
      .map((a) => a.waitMs / 1000)
      .join(', ')}] (base 0.5 s * 2^k)`,
  );

  report.demo('Retry-After: GET /limited from the 3rd call on');
  const limitedLedger = watch(new Ledger());
  const polite = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger: limitedLedger,
    maxRetries: 3,
  });
  for (let i = 0; i < 3; i++) await polite.get('/limited', { query: { run } });
  const waits = limitedLedger.attempts.filter((a) => a.waitReason === 'retry_after').map((a) => a.waitMs / 1000);
  report.note(
    `the server said HTTP 429 with Retry-After; the client waited [${waits.join(', ')}] s, as told, instead of its own backoff`,
  );

  report.demo('no retry for a 404');
  const notFound = watch(new Ledger());
  const c404 = new HttpClient({ baseUrl: stack.apiUrl, auth: { key: stack.apiKey }, ledger: notFound });
  report.note(
    `GET /employees/e-99 -> ${await outcome(c404.get('/employees/e-99'))} after ${notFound.attempts.length} attempt: a 4xx will not get better by retrying`,
  );

  report.demo(
    noKey
      ? 'an answer lost on the way back, retried WITHOUT a key (--no-key)'
      : 'an answer lost on the way back, replayed by its Idempotency-Key',
  );
  const replayLedger = watch(new Ledger());
  const replier = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger: replayLedger,
    backoff: { baseMs: 100, jitter: 0 },
  });
  if (stack.embedded) {
    // The reply is stored, then its answer is cut half way: the client cannot know it landed.
    await installFaults(stack.apiUrl, stack.apiKey, {
      rules: [{ method: 'POST', path: '/emails/{email_id}/reply', action: 'truncate', times: 1 }],
    });
    // --no-key: the POST is declared safe to repeat though it carries no key (the mistake to see);
    // the client then retries it like a GET, and the API cannot tell the retry from a new reply.
    const sent = await replier.post(
      '/emails/m-0042/reply',
      { body: 'On it.' },
      noKey ? { idempotent: true } : { idempotencyKey: true },
    );
    await installFaults(stack.apiUrl, stack.apiKey, { rules: [] });
    const stored = (await replier.get('/emails/m-0042/replies')).data as { data: unknown[] };
    report.table(
      ['attempt', 'status', 'what happened', 'Idempotency-Key'],
      replayLedger.attempts
        .filter((a) => a.method === 'POST')
        .map((a) => [
          a.attempt,
          a.status ?? null,
          a.errorType ?? 'success',
          a.idempotencyKey ? `${a.idempotencyKey.slice(0, 8)}...` : 'none',
        ]),
    );
    report.table(
      ['after the retry', 'value'],
      [
        ['idempotent-replayed header', String(sent.headers['idempotent-replayed'] ?? 'absent')],
        ['replies stored for m-0042', stored.data.length],
      ],
    );
    report.note(
      noKey
        ? 'No key: the API took the retry for a new reply and stored it again. Run without --no-key to see one reply.'
        : 'Both attempts carried the same key, so the server answered the retry from what it stored: one reply, not two.',
    );
  } else {
    report.note('Shown on the embedded stack only: it needs the admin endpoint to cut an answer on purpose.');
  }

  await streamDemos(stack, report, right, watch);

  report.demo('the ledger of a small task: emails, senders, digest, one fault');
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
  report.table(
    ['metric', 'value'],
    [
      ['requests sent (retries included)', totals.requests],
      ['of which retries after a failure', totals.retries],
      ['response body bytes received', totals.bytesReceived],
      ['seconds spent in backoff', Number((totals.waitMs.backoff / 1000).toFixed(2))],
    ],
  );
  for (const c of [anonymous, wrong, right, retrying, polite, c404, replier, task]) await c.close();

  report.demo('a write the API does not dedupe, through the gateway: no key, one key');
  // POST /notes takes no Idempotency-Key: each call stores one more note. The gateway dedupes a
  // call named by _meta["agentwire.dev/idempotencyKey"] itself (a lease, then the stored result).
  const writeNote = async (text: string, key?: string) => {
    const response = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'create_note',
        ...(stack.mcpToken ? { authorization: `Bearer ${stack.mcpToken}` } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'create_note',
          arguments: { text },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            ...(key ? { 'agentwire.dev/idempotencyKey': key } : {}),
          },
        },
      }),
    });
    const answer = (await response.json()) as { result?: { _meta?: Record<string, unknown> } };
    return answer.result?._meta?.['agentwire.dev/write'] as { replayed?: boolean; by?: string } | undefined;
  };
  const notes = new HttpClient({ baseUrl: stack.apiUrl, auth: { key: stack.apiKey } });
  const stored = async (text: string) =>
    ((await notes.get('/notes', { query: { prefix: text } })).data as { data: unknown[] }).data.length;
  const plain = `lab 3 ${run}: no key`;
  await writeNote(plain);
  await writeNote(plain);
  const keyed = `lab 3 ${run}: one key`;
  await writeNote(keyed, `lab3-${run}`);
  const second = await writeNote(keyed, `lab3-${run}`);
  report.table(
    ['create_note, the same call twice', 'notes stored', 'the second answer'],
    [
      ['without a key', await stored(plain), 'written again'],
      [
        'with one idempotency key',
        await stored(keyed),
        second?.replayed ? `replayed by the ${second.by}` : 'written again',
      ],
    ],
  );
  report.note(
    'The API cannot tell a repeat from a new note. With _meta["agentwire.dev/idempotencyKey"], the gateway runs the first call, keeps its result, and answers the repeat from it.',
  );
  await notes.close();

  report.demo('a sick upstream: a breaker opens and closes, a hedge cuts a stall');
  if (stack.embedded) await sickUpstream(stack, report);
  else report.note('Shown on the embedded stack only: it needs the admin endpoint to make the API sick.');
}
