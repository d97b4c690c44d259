// The agent's redirect URI while it signs in: a server on 127.0.0.1 at a port the system
// picks (RFC 8252 §7.3: a native app's loopback redirect), that takes one callback and stops.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Loopback {
  redirectUrl: string;
  /** The callback's query (code, state, iss, or error), once the browser arrives. */
  callback(timeoutMs: number): Promise<URLSearchParams>;
  close(): void;
}

export async function startLoopback(): Promise<Loopback> {
  const waiting: Array<(query: URLSearchParams) => void> = [];
  const arrived: URLSearchParams[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not the callback\n');
      return;
    }
    const failed = url.searchParams.has('error');
    response
      .writeHead(failed ? 400 : 200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
      .end(
        failed
          ? 'Sign-in failed; the agent says why.\n'
          : 'Signed in: you can close this tab and return to the terminal.\n',
      );
    const next = waiting.shift();
    if (next) next(url.searchParams);
    else arrived.push(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    callback: (timeoutMs) => {
      const ready = arrived.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no sign-in within ${Math.round(timeoutMs / 1000)} s`)),
          timeoutMs,
        );
        timer.unref();
        waiting.push((query) => {
          clearTimeout(timer);
          resolve(query);
        });
      });
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
