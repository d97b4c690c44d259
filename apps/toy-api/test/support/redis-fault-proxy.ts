// A TCP proxy between the toy API and a real Redis that can lose an answer on purpose: when a
// command it is told to watch for reaches Redis, Redis runs it, and the proxy drops the answer and
// cuts the connection, as a Redis restart or a network fault does. The client cannot tell whether
// its write happened: the exact moment where exactly-once breaks unless the write can be repeated.
import { createServer, type Server, Socket } from 'node:net';

export interface RedisFaultProxy {
  url: string;
  /**
   * The next command whose bytes contain `marker` runs on Redis; its answer is dropped and the
   * connection cut. `afterCut` runs once the answer has been dropped (to kill the client, say).
   */
  loseAnswerTo(marker: string, afterCut?: () => void): void;
  /** How many answers were dropped so far. */
  readonly lost: number;
  close(): Promise<void>;
}

export async function startRedisFaultProxy(redisUrl: string): Promise<RedisFaultProxy> {
  const target = new URL(redisUrl);
  const sockets = new Set<Socket>();
  let armed: { marker: string; afterCut: (() => void) | undefined } | undefined;
  let lost = 0;

  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    // Set when a watched command went to Redis: its answer is the next thing Redis sends back
    // on this connection (the client waits for it before a later command can matter).
    let dropNextAnswer = false;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    upstream.connect(Number(target.port || 6379), target.hostname);
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes(armed.marker)) {
        dropNextAnswer = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (dropNextAnswer) {
        const afterCut = armed?.afterCut;
        armed = undefined;
        dropNextAnswer = false;
        lost++;
        cut();
        afterCut?.();
        return;
      }
      client.write(chunk);
    });
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);

  return {
    url: url.toString(),
    loseAnswerTo(marker, afterCut) {
      armed = { marker, afterCut };
    },
    get lost() {
      return lost;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
