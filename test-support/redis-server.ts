// Vitest global setup for the packages whose tests need Redis (the toy API's stores, the
// gateway's sessions). CI starts one and sets REDIS_URL; without it, start a private redis-server.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

let child: ChildProcess | undefined;

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

export async function setup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  const port = await freePort();
  child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    child?.once('error', (err) => {
      clearTimeout(timer);
      reject(
        new Error(
          `The tests need Redis: set REDIS_URL, or install redis-server (apt-get install redis-server). ${err.message}`,
        ),
      );
    });
    child?.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  process.env.REDIS_URL = `redis://127.0.0.1:${port}`;
}

export async function teardown(): Promise<void> {
  child?.kill('SIGTERM');
}
