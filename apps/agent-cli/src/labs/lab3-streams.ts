// Lab 3's streaming demos (lecture section 6): the first piece against the whole digest, the
// stream on the wire (chunked transfer encoding), a stream stopped early stopping the work
// upstream, and a stream cut half way resumed from Last-Event-ID.
import { HttpClient, Ledger } from '@agentwire/http-client';
import type { Stack } from '../embedded-stack.js';
import { installFaults } from '../faults.js';
import type { LabReport } from './lab-report.js';
import { rawRequest } from './lab1-http.js';

/** Demos 7-10; `right` is a client with the right key, `watch` adds --trace to a ledger. */
export async function streamDemos(
  stack: Stack,
  report: LabReport,
  right: HttpClient,
  watch: (ledger: Ledger) => Ledger,
): Promise<void> {
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
