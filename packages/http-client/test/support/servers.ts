// Real servers on loopback for the client's tests: the toy API, and small handwritten
// servers for what the toy API cannot produce. Everything started here is closed after each test.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type App, buildApp } from '@agentwire/toy-api';
import { afterEach } from 'vitest';

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

export function onCleanup(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

export interface ToyApi {
  url: string;
  key: string;
  readKey: string;
  app: App;
  setFaults(config: unknown): Promise<void>;
  replies(emailId: string): Promise<unknown[]>;
}

export async function startToyApi(): Promise<ToyApi> {
  const key = `full-${randomBytes(12).toString('hex')}`;
  const readKey = `read-${randomBytes(12).toString('hex')}`;
  const app = await buildApp({ apiKey: key, readOnlyKey: readKey, admin: true });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const auth = { authorization: `Bearer ${key}` };
  return {
    url,
    key,
    readKey,
    app,
    async setFaults(config) {
      const response = await fetch(`${url}/admin/faults`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(config),
      });
      if (response.status !== 200) throw new Error(`setting faults failed: ${await response.text()}`);
    },
    async replies(emailId) {
      const response = await fetch(`${url}/emails/${emailId}/replies`, { headers: auth });
      return ((await response.json()) as { data: unknown[] }).data;
    },
  };
}

export interface SmallServer {
  url: string;
  /** How many requests it has seen. */
  hits: () => number;
  requests: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }>;
}

/** A bare node:http server; the handler gets the request number (0-based), like undici's tests. */
export async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse, count: number) => void,
): Promise<SmallServer> {
  const requests: SmallServer['requests'] = [];
  const server = createServer((req, res) => {
    const count = requests.length;
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res, count);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => requests.length, requests };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
