// Vitest global setup for the packages whose tests need Redis (the toy API's stores, the
// gateway's sessions). In order: REDIS_URL when it is set (CI sets it); else a Redis container
// when a Docker engine answers (image: REDIS_IMAGE, default redis:7-bookworm); else a private
// redis-server process on a free loopback port.
import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection, createServer } from 'node:net';

const REDIS_IMAGE = process.env.REDIS_IMAGE || 'redis:7-bookworm';

let stop: (() => Promise<void>) | undefined;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A Redis container, or undefined when no Docker engine answers. */
async function redisContainer(): Promise<{ url: string; stop: () => Promise<void> } | undefined> {
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  try {
    await getContainerRuntimeClient();
  } catch {
    return undefined;
  }
  const container = await new GenericContainer(REDIS_IMAGE)
    .withCommand(['redis-server', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  const host = container.getHost();
  const port = container.getMappedPort(6379);
  const stopContainer = async () => {
    await container.stop({ timeout: 1_000 });
  };
  // A host that looks like a container to testcontainers (a /.dockerenv) gets the bridge's
  // address, which may not route here: then use a local redis-server instead.
  if (!(await answersPing(host, port))) {
    await stopContainer();
    return undefined;
  }
  return { url: `redis://${host}:${port}`, stop: stopContainer };
}

function answersPing(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port }, () => socket.write('PING\r\n'));
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
    socket.once('error', () => done(false));
  });
}

/** A private redis-server on loopback (a given port, to start it again where it was). */
export async function redisProcess(port?: number): Promise<{ url: string; port: number; stop: () => Promise<void> }> {
  port ??= await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(
        new Error(
          'The tests need Redis: set REDIS_URL, start a Docker engine, or install redis-server ' +
            `(apt-get install redis-server). ${err.message}`,
        ),
      );
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

export async function setup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  const redis = (await redisContainer()) ?? (await redisProcess());
  stop = redis.stop;
  process.env.REDIS_URL = redis.url;
}

export async function teardown(): Promise<void> {
  await stop?.();
  stop = undefined;
}
