// Lab 3 (lecture sections 5 and 6): auth, timeouts, retries with their waits, Retry-After, no
// retry on 404, an answer lost and replayed by its idempotency key, SSE (chunked on the wire,
// and stopped early), and the ledger, measured with packages/http-client against the API.
import { HttpClient, isHttpClientError, Ledger } from '@agentwire/http-client';
import type { Stack } from '../embedded-stack.js';
import { installFaults } from '../faults.js';
import { printError } from '../print.js';
import { describeHttp } from '../wire-trace.js';
import type { LabReport } from './lab-report.js';
import { rawRequest } from './lab1-http.js';

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

  report.demo('streaming (SSE): first piece vs the whole digest');
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
  report.table(
    ['', 'ms'],
    [
      ['first piece arrived after', Math.round(first)],
      [`all ${pieces} pieces after`, Math.round(total)],
    ],
  );

  report.demo('the stream on the wire: chunked transfer encoding');
  const host = new URL(stack.apiUrl).host;
  const body = '{"date": "2026-06-10", "max_items": 1}';
  const wire = await rawRequest(
    stack.apiUrl,
    `POST /digest?interval_ms=0 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${stack.apiKey}\r\n` +
      `Accept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
    5000,
  );
  const headEnd = wire.indexOf('\r\n\r\n');
  const head = wire.slice(0, headEnd).split('\r\n');
  const chunks = chunkSizes(wire.slice(headEnd + 4));
  report.wire(
    [
      ...head.filter((line) => /^(HTTP\/|content-type|transfer-encoding|content-length)/i.test(line)),
      '',
      ...wire
        .slice(headEnd + 4)
        .split('\r\n')
        .slice(0, 6)
        .map((line) =>
          /^[0-9a-f]+$/i.test(line)
            ? `${line}    <- a chunk of 0x${line} = ${Number.parseInt(line, 16)} bytes`
            : line.slice(0, 60),
        ),
      '...',
    ].join('\n'),
  );
  report.table(
    ['Transfer-Encoding', 'Content-Length', 'chunks', 'last chunk'],
    [[headerOf(head, 'transfer-encoding'), headerOf(head, 'content-length'), chunks.length, chunks.at(-1) ?? null]],
  );
  report.note(
    'No Content-Length: the server cannot know the length of a stream in advance, so each piece goes out with its size in hex, and a chunk of size 0 ends the body.',
  );

  report.demo('stopping a stream early stops the work upstream');
  if (stack.embedded) {
    const before = await streamStats(right);
    let read = 0;
    for await (const event of right.stream({
      method: 'POST',
      path: '/digest',
      json: { date: '2026-06-10', max_items: 20 },
      query: { interval_ms: 50 },
      idempotent: true,
    })) {
      if (event.event === 'delta' && ++read === 3) break;
    }
    // The API notices the closed connection at its next pause; wait for that (bounded).
    let after = await streamStats(right);
    for (let i = 0; i < 100 && after.open > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await streamStats(right);
    }
    const whole = (await right.post('/digest', { date: '2026-06-10', max_items: 20 })).data as { text: string };
    report.table(
      ['', 'value'],
      [
        ['delta events the whole digest has', whole.text.split(' ').length],
        ['events the client read, then stopped', read],
        ['events the API sent in all', after.events_sent - before.events_sent],
        ['streams still open on the API', after.open],
        ['streams ended because the client left', after.client_left - before.client_left],
      ],
    );
    report.note('Breaking out of the loop closes the connection; the API sees it and stops composing the digest.');
  } else {
    report.note("Shown on the embedded stack only: it reads the API's stream figures from its admin endpoint.");
  }

  report.demo('a stream cut half way, resumed from Last-Event-ID');
  if (stack.embedded) {
    const resumeLedger = watch(new Ledger());
    const resumer = new HttpClient({ baseUrl: stack.apiUrl, auth: { key: stack.apiKey }, ledger: resumeLedger });
    // The API stops the stream after 3 events, once; the client reconnects with the id of the last one.
    await installFaults(stack.apiUrl, stack.apiKey, {
      rules: [{ method: 'POST', path: '/digest', action: 'cut_stream', after_events: 3, times: 1 }],
    });
    const ids: string[] = [];
    for await (const event of resumer.stream({
      method: 'POST',
      path: '/digest',
      json: { date: '2026-06-10', max_items: 1 },
      query: { interval_ms: 0 },
      idempotent: true,
    })) {
      if (event.id !== undefined) ids.push(event.id);
    }
    await installFaults(stack.apiUrl, stack.apiKey, { rules: [] });
    let uncut = 0;
    for await (const event of right.stream({
      method: 'POST',
      path: '/digest',
      json: { date: '2026-06-10', max_items: 1 },
      query: { interval_ms: 0 },
      idempotent: true,
    }))
      if (event.id !== undefined) uncut++;
    report.table(
      ['attempt', 'status', 'what happened', 'Last-Event-ID sent'],
      resumeLedger.attempts.map((a) => [a.attempt, a.status ?? null, a.errorType ?? 'success', a.resumedFrom ?? '-']),
    );
    report.table(
      ['events', 'value'],
      [
        ['read in all', ids.length],
        ['in the same stream, not cut', uncut],
        ['read twice', ids.length - new Set(ids).size],
      ],
    );
    report.note(
      `Each event carries an id. When the connection broke, the client asked again with Last-Event-ID: ${resumeLedger.attempts.find((a) => a.resumedFrom)?.resumedFrom ?? '-'}, and the API sent only what came after it: nothing lost, nothing twice.`,
    );
    await resumer.close();
  } else {
    report.note('Shown on the embedded stack only: it needs the admin endpoint to cut a stream on purpose.');
  }

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

/** The breaker through its states, and a stalled read with and without a hedge. */
async function sickUpstream(stack: Stack, report: LabReport): Promise<void> {
  // The breaker: 10 failing calls open it (half of at least 10 failed); two calls are refused
  // without being sent; after the break one probe goes, succeeds, and closes it.
  const breakMs = 300;
  const ledger = new Ledger();
  const guarded = new HttpClient({
    baseUrl: stack.apiUrl,
    auth: { key: stack.apiKey },
    ledger,
    maxRetries: 0,
    retryBudget: false,
    breaker: { failureRatio: 0.5, minimumThroughput: 10, breakDurationMs: breakMs },
  });
  await installFaults(stack.apiUrl, stack.apiKey, {
    rules: [{ method: 'GET', path: '/employees/{employee_id}', action: 'status', status: 503, times: 10 }],
  });
  const outcomes: string[] = [];
  const once = async () => {
    try {
      await guarded.get('/employees/e-05');
      outcomes.push(ledger.entries.at(-1)?.kind === 'event' ? '200, the probe: closed' : '200');
    } catch (error) {
      outcomes.push(
        isHttpClientError(error) && error.type === 'circuit_open'
          ? 'refused at once, not sent'
          : `${(error as { status?: number }).status} sent, failed`,
      );
    }
  };
  for (let i = 0; i < 12; i++) await once();
  await new Promise((resolve) => setTimeout(resolve, breakMs));
  for (let i = 0; i < 2; i++) await once();
  await installFaults(stack.apiUrl, stack.apiKey, { rules: [] });
  await guarded.close();
  // Consecutive calls with the same outcome on one row.
  const rows: Array<[string, string]> = [];
  outcomes.forEach((outcome, i) => {
    const last = rows.at(-1);
    const [from] = (last?.[0] ?? '').split('-');
    if (last && last[1] === outcome) last[0] = `${from}-${i + 1}`;
    else rows.push([String(i + 1), outcome]);
  });
  const changes = ledger.entries
    .filter((e) => e.kind === 'event' && e.event === 'circuit_state')
    .map((e) => (e.kind === 'event' ? (e.detail.split(': ').at(-1) ?? '') : ''));
  report.table(['calls', 'what happened'], rows);
  report.note(
    `The breaker went ${changes.join(', then ')} (upstream requests: ${ledger.attempts.length} of ${outcomes.length} calls). Only 5xx, timeouts and broken connections count; after the ${breakMs} ms break one probe decided.`,
  );

  // The hedge: the first read stalls for 1.5 s; a hedge sent after 100 ms answers instead.
  const stalled = async (hedge: boolean) => {
    await installFaults(stack.apiUrl, stack.apiKey, {
      rules: [{ method: 'GET', path: '/employees/{employee_id}', action: 'delay', delay_ms: 1500, times: 1 }],
    });
    const hedgeLedger = new Ledger();
    const client = new HttpClient({
      baseUrl: stack.apiUrl,
      auth: { key: stack.apiKey },
      ledger: hedgeLedger,
      ...(hedge ? { hedge: { delayMs: 100 } } : {}),
    });
    const started = performance.now();
    await client.get('/employees/e-05');
    const ms = Math.round(performance.now() - started);
    await client.close();
    return { ms, attempts: hedgeLedger.attempts };
  };
  const plain = await stalled(false);
  const hedged = await stalled(true);
  await installFaults(stack.apiUrl, stack.apiKey, { rules: [] });
  report.table(
    ['one read, the first answer stalled 1.5 s', 'requests', 'answered after'],
    [
      ['without a hedge', plain.attempts.length, `${(plain.ms / 1000).toFixed(1)} s`],
      [
        'a hedge after 100 ms',
        hedged.attempts.length,
        `${(hedged.ms / 1000).toFixed(1)} s (${hedged.attempts.find((a) => a.errorType === 'hedge_lost') ? 'the stalled one aborted' : '?'})`,
      ],
    ],
  );
  report.note(
    'A read that has not answered after a delay gets a second attempt; the first answer wins and the other is aborted. With a percentile (hedge: { percentile: 95 }) only the slowest few percent are hedged, and none while the retry budget holds retries back.',
  );
}

function headerOf(head: string[], name: string): string | null {
  const line = head.find((l) => l.toLowerCase().startsWith(`${name}:`));
  return line ? line.slice(name.length + 1).trim() : null;
}

/** The sizes of the chunks in a chunked body, in order (the final 0 included). */
function chunkSizes(body: string): number[] {
  const sizes: number[] = [];
  let at = 0;
  while (at < body.length) {
    const end = body.indexOf('\r\n', at);
    if (end < 0) break;
    const size = Number.parseInt(body.slice(at, end), 16);
    if (Number.isNaN(size)) break;
    sizes.push(size);
    if (size === 0) break;
    at =
      end +
      2 +
      Buffer.from(body.slice(end + 2))
        .subarray(0, size)
        .toString().length +
      2;
  }
  return sizes;
}

interface StreamFigures {
  open: number;
  client_left: number;
  events_sent: number;
}

async function streamStats(client: HttpClient): Promise<StreamFigures> {
  return (await client.get('/admin/streams')).data as StreamFigures;
}
