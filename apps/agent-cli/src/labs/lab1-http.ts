// Lab 1 (lecture sections 1 to 3): a raw HTTP request over a socket, keep-alive, GET vs POST,
// the status-code table, and what a wrong Content-Length does, all against the running API.
import { connect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Stack } from '../embedded-stack.js';
import { UsageError } from '../usage-error.js';
import type { LabReport } from './lab-report.js';

/** The request timeout lab 1 gives its embedded API, so that a body that never comes is seen in seconds. */
export const LAB1_REQUEST_TIMEOUT_MS = 1500;
/** A body over the API's 64 KiB limit (65,536 bytes), for the 413 row. */
const BIG_BODY_BYTES = 70_000;

/**
 * Where raw bytes go for a URL: https speaks TLS (the key in the bytes never crosses in clear),
 * and a URL without a port goes to the scheme's (80 or 443), not to port 0.
 */
export function rawTarget(url: string): { secure: boolean; host: string; port: number } {
  const { protocol, hostname, port } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new UsageError(`raw requests go to an http:// or https:// URL, got '${protocol}'`);
  }
  const secure = protocol === 'https:';
  return { secure, host: hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(port || (secure ? 443 : 80)) };
}

/** Sends bytes over TCP (TLS for an https URL) and returns what came back by the time the server closed (or `waitMs`). */
export function rawRequest(url: string, bytes: string | Buffer, waitMs = 1500): Promise<string> {
  const { secure, ...to } = rawTarget(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = secure
      ? tlsConnect({ ...to, ...(isIP(to.host) ? {} : { servername: to.host }) }, () => socket.write(bytes))
      : connect(to.port, to.host, () => socket.write(bytes));
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString());
    });
  });
}

/** Reads one response with a Content-Length off a socket that stays open. */
function readResponse(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString();
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received)?.[1] ?? 0);
      if (Buffer.byteLength(received) - (end + 4) < length) return;
      socket.off('data', onData);
      resolve(received);
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

const statusLine = (answer: string) => answer.split('\r\n')[0] ?? '';
const header = (answer: string, name: string) =>
  new RegExp(`\\r\\n${name}: ([^\\r]*)`, 'i').exec(answer.slice(0, answer.indexOf('\r\n\r\n') + 2))?.[1] ?? null;
const envelope = (answer: string) => {
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  try {
    return (JSON.parse(body.slice(0, body.indexOf('}}') + 2)) as { error: { type: string; message: string } }).error;
  } catch {
    return { type: '-', message: body.slice(0, 60) };
  }
};

export async function lab1(stack: Stack, report: LabReport): Promise<void> {
  const host = new URL(stack.apiUrl).host;
  const auth = { authorization: `Bearer ${stack.apiKey}` };

  report.demo('a request written by hand on a socket');
  const request = `GET /health HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: agentwire-lab/1.0\r\nAccept: application/json\r\nConnection: close\r\n\r\n`;
  // Every line ends in the two bytes CR LF; shown as a visible \r\n so they can be counted.
  const visible = (text: string) => text.replaceAll('\r\n', '\\r\\n\n');
  report.wire(visible(request));
  const answer = await rawRequest(stack.apiUrl, request);
  report.wire(
    visible(answer)
      .replace(/request-id: \S+/, 'request-id: <per request>\\r\\n')
      .replace(/date: .*\n/i, 'Date: <now>\\r\\n\n'),
  );
  report.note(
    'Each line ends in CR LF (\\r\\n, bytes 13 and 10); the empty line, CR LF alone, ends the headers. The body has no end mark of its own: content-length says it is 11 bytes.',
  );

  report.demo('keep-alive: two requests on one TCP connection');
  const socket = connect(Number(new URL(stack.apiUrl).port), new URL(stack.apiUrl).hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const keepAliveRows: Array<Array<string | number | null>> = [];
  for (const n of [1, 2]) {
    const reply = readResponse(socket);
    socket.write(`GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const got = await reply;
    keepAliveRows.push([
      n,
      socket.localPort ?? 0,
      statusLine(got),
      header(got, 'connection'),
      header(got, 'keep-alive'),
    ]);
  }
  socket.destroy();
  report.table(['request', 'our port', 'status line', 'Connection', 'Keep-Alive'], keepAliveRows);
  report.note(
    'Same local port, so the same TCP connection: HTTP/1.1 keeps it open unless a side says Connection: close, and the second request skips the TCP handshake.',
  );

  report.demo('GET puts parameters in the URL, POST in the body');
  const get = await fetch(`${stack.apiUrl}/emails?urgent=true&limit=2`, { headers: auth });
  const post = await fetch(`${stack.apiUrl}/digest`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ date: '2026-06-10', max_items: 3 }),
  });
  report.table(
    ['request', 'status', 'body bytes'],
    [
      ['GET /emails?urgent=true&limit=2', get.status, (await get.arrayBuffer()).byteLength],
      ['POST /digest {"date": "2026-06-10", "max_items": 3}', post.status, (await post.arrayBuffer()).byteLength],
    ],
  );

  report.demo('status codes and error bodies');
  const json = (method: string, body: string) => () =>
    fetch(`${stack.apiUrl}/digest`, { method, headers: { ...auth, 'content-type': 'application/json' }, body });
  let exportAt = '';
  const cases: Array<[string, () => Promise<{ status: number; type: string }>]> = [
    ['GET /health (no auth needed)', viaFetch(() => fetch(`${stack.apiUrl}/health`))],
    ['GET /emails without a token', viaFetch(() => fetch(`${stack.apiUrl}/emails`))],
    ['GET /nope, no such path', viaFetch(() => fetch(`${stack.apiUrl}/nope`, { headers: auth }))],
    ['POST /digest without date', viaFetch(json('POST', '{"max_items": 3}'))],
    ['POST /digest, date in the wrong format', viaFetch(json('POST', '{"date": "June 10"}'))],
    [
      'GET /flaky, a temporary fault',
      viaFetch(() => fetch(`${stack.apiUrl}/flaky?fail_times=1&run=lab1-${Date.now()}`, { headers: auth })),
    ],
    [
      'POST /exports, a long job',
      async () => {
        const r = await fetch(`${stack.apiUrl}/exports`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ date: '2026-06-10', duration_ms: 0 }),
        });
        exportAt = r.headers.get('location') ?? '';
        await r.body?.cancel();
        return { status: r.status, type: '-' };
      },
    ],
    [
      'GET /exports/{id}, once done',
      async () => {
        // redirect: 'manual' shows the 303 itself; fetch would otherwise follow Location.
        const r = await fetch(new URL(exportAt, stack.apiUrl), { headers: auth, redirect: 'manual' });
        await r.body?.cancel();
        return { status: r.status, type: '-' };
      },
    ],
    ...(stack.readOnlyKey
      ? [
          [
            'POST /notes with the read-only key',
            viaFetch(() =>
              fetch(`${stack.apiUrl}/notes`, {
                method: 'POST',
                headers: { authorization: `Bearer ${stack.readOnlyKey}`, 'content-type': 'application/json' },
                body: '{"text": "hello"}',
              }),
            ),
          ] as [string, () => Promise<{ status: number; type: string }>],
        ]
      : []),
    [
      `POST /digest, a ${BIG_BODY_BYTES / 1000} KB body`,
      viaFetch(json('POST', JSON.stringify({ date: '2026-06-10', pad: 'x'.repeat(BIG_BODY_BYTES) }))),
    ],
    [
      'GET /health with no Host header (raw)',
      async () => {
        const got = await rawRequest(stack.apiUrl, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
        return { status: Number(statusLine(got).split(' ')[1]), type: envelope(got).type };
      },
    ],
  ];
  const rows: Array<Array<string | number>> = [];
  for (const [label, send] of cases) {
    const { status, type } = await send();
    const advice =
      status < 300
        ? 'carry on'
        : status < 400
          ? 'follow Location'
          : status >= 500 || status === 429
            ? 'retry, with backoff'
            : 'fix the request';
    rows.push([label, status, type, advice]);
  }
  report.table(['request', 'status', 'error type', 'the client should'], rows);
  report.note(
    '202 means accepted, not done: its Location says where to ask; once done, that answer is a 303 whose Location is the file. 401 is "who are you?", 403 "you may not" (this key reads only). 413: the API reads at most 64 KiB of body. HTTP/1.1 requires Host (RFC 9112, 3.2): without it the API answers 400 in its usual error envelope.',
  );

  report.demo('Content-Length that does not match the body');
  const body = '{"date": "2026-06-10"}';
  const head = `POST /digest HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${stack.apiKey}\r\nContent-Type: application/json\r\n`;
  const short = await rawRequest(stack.apiUrl, `${head}Content-Length: 10\r\nConnection: close\r\n\r\n${body}`);
  const lengthRows: Array<Array<string | number>> = [
    [
      `10 (body is ${Buffer.byteLength(body)})`,
      `only '${body.slice(0, 10)}'`,
      statusLine(short).slice(9),
      envelope(short).message,
    ],
  ];
  if (stack.embedded) {
    const started = performance.now();
    const long = await rawRequest(
      stack.apiUrl,
      `${head}Content-Length: 100\r\n\r\n${body}`,
      LAB1_REQUEST_TIMEOUT_MS + 5000,
    );
    const waited = ((performance.now() - started) / 1000).toFixed(1);
    lengthRows.push([
      `100 (body is ${Buffer.byteLength(body)})`,
      `waits for 78 more bytes`,
      statusLine(long).slice(9),
      `after ${waited} s: ${envelope(long).message}`,
    ]);
  }
  report.table(['Content-Length', 'the server reads', 'answer', 'why'], lengthRows);
  report.note(
    stack.embedded
      ? `The lab gave its API a request timeout of ${LAB1_REQUEST_TIMEOUT_MS / 1000} s (REQUEST_TIMEOUT_MS; the default is 30 s), so the missing bytes are given up on quickly.`
      : 'A longer Content-Length is shown on the embedded stack only: a running API waits its own request timeout (30 s by default).',
  );
}

function viaFetch(send: () => Promise<Response>): () => Promise<{ status: number; type: string }> {
  return async () => {
    const r = await send();
    const body = (await r.json()) as { error?: { type: string } };
    return { status: r.status, type: body.error?.type ?? '-' };
  };
}
