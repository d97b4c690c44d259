// A loopback redirect URI, as a native client opens one (RFC 8252 §7.3): it waits for the one
// request the browser is sent to, and answers it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function callbackServer(): Promise<{
  redirectUri: string;
  received: Promise<URLSearchParams>;
  close(): void;
}> {
  let resolve: (query: URLSearchParams) => void = () => undefined;
  const received = new Promise<URLSearchParams>((r) => {
    resolve = r;
  });
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/plain' }).end('signed in; you can close this tab');
    resolve(url.searchParams);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
