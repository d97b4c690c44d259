// Lab 1 (lecture sections 1 to 3): a raw HTTP request over a socket, GET vs POST, the
// status-code table, and what a wrong Content-Length does — all against the running API.
import { connect } from 'node:net';
import type { Stack } from '../embedded-stack.js';
import { table } from './table.js';

/** Sends bytes over a plain TCP socket and returns what came back. */
export function rawRequest(url: string, bytes: string, waitMs = 1500): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.on('data', (c) => {
      received += c.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    setTimeout(() => socket.destroy(), waitMs);
  });
}

export async function lab1(stack: Stack, print: (text: string) => void): Promise<void> {
  const host = new URL(stack.apiUrl).host;
  print('Demo 1: a request written by hand on a socket\n');
  const request = `GET /health HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: agentwire-lab/1.0\r\nAccept: application/json\r\nConnection: close\r\n\r\n`;
  print(request.replaceAll('\r\n', '\n'));
  const answer = await rawRequest(stack.apiUrl, request);
  print(
    `${answer
      .replaceAll('\r\n', '\n')
      .replace(/request-id: \S+/, 'request-id: <per request>')
      .replace(/date: .*\n/i, 'Date: <now>\n')}\n`,
  );

  print('\nDemo 2: GET puts parameters in the URL, POST in the body\n');
  const auth = { authorization: `Bearer ${stack.apiKey}` };
  const get = await fetch(`${stack.apiUrl}/emails?urgent=true&limit=2`, { headers: auth });
  const post = await fetch(`${stack.apiUrl}/digest`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ date: '2026-06-10', max_items: 3 }),
  });
  print(
    table(
      ['request', 'status', 'body bytes'],
      [
        ['GET  /emails?urgent=true&limit=2', get.status, (await get.arrayBuffer()).byteLength],
        ['POST /digest {"date": "2026-06-10", "max_items": 3}', post.status, (await post.arrayBuffer()).byteLength],
      ],
    ),
  );

  print('\n\nDemo 3: status codes and error bodies\n');
  const cases: Array<[string, () => Promise<Response>]> = [
    ['GET /health (no auth needed)', () => fetch(`${stack.apiUrl}/health`)],
    ['GET /emails without a token', () => fetch(`${stack.apiUrl}/emails`)],
    ['GET /nope, no such path', () => fetch(`${stack.apiUrl}/nope`, { headers: auth })],
    [
      'POST /digest without date',
      () =>
        fetch(`${stack.apiUrl}/digest`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: '{"max_items": 3}',
        }),
    ],
    [
      'POST /digest, date in the wrong format',
      () =>
        fetch(`${stack.apiUrl}/digest`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: '{"date": "June 10"}',
        }),
    ],
    [
      'GET /flaky, a temporary fault',
      () => fetch(`${stack.apiUrl}/flaky?fail_times=1&run=lab1-${Date.now()}`, { headers: auth }),
    ],
  ];
  const rows: Array<Array<string | number>> = [];
  for (const [label, send] of cases) {
    const r = await send();
    const body = (await r.json()) as { error?: { type: string } };
    const type = body.error?.type ?? '-';
    const advice =
      r.status < 400 ? 'carry on' : r.status >= 500 || r.status === 429 ? 'retry (with backoff)' : 'fix the request';
    rows.push([label, r.status, type, advice]);
  }
  print(table(['request', 'status', 'error type', 'what the client should do'], rows));

  print('\n\nDemo 4: Content-Length says 10, the body is 22 bytes\n');
  const body = '{"date": "2026-06-10"}';
  const short = await rawRequest(
    stack.apiUrl,
    `POST /digest HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${stack.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n${body}`,
  );
  const status = short.split('\r\n')[0] ?? '';
  const json = short.slice(short.indexOf('\r\n\r\n') + 4);
  const message = (JSON.parse(json.slice(0, json.indexOf('}}') + 2)) as { error: { message: string } }).error.message;
  print(
    `body: ${Buffer.byteLength(body)} bytes; the server read only the first 10: '${body.slice(0, 10)}'\n  -> ${status}\n  -> ${message}`,
  );
}
