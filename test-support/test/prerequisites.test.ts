// `pnpm test` on a machine that lacks what the suites need: it stops before any suite starts with
// one message that names what is missing and how to get it, or says in one line what it chose.
// Each case runs the real entry point (scripts/test.mjs) as a process, with a PATH and an
// environment made for the case: no Docker engine, and as root, the unprivileged user `nobody`.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { answersPing, freePort, startRedisProcess, which } from '../prerequisites.mjs';

const ENTRY = fileURLToPath(new URL('../../scripts/test.mjs', import.meta.url));
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A folder holding only the named programs (links to the real ones), to use as PATH. */
function pathWith(...programs: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-path-'));
  chmodSync(dir, 0o755); // readable by `nobody`
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(process.execPath, join(dir, 'node'));
  for (const name of programs) {
    const real = which(name);
    if (real) symlinkSync(real, join(dir, name));
  }
  return dir;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node scripts/test.mjs ARGS` with only this environment, as `nobody` when we are root. */
function runEntry(env: Record<string, string>, args: string[] = []): Promise<Run> {
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ENTRY, ...args], {
      env: {
        HOME: tmpdir(),
        // No Docker engine for these cases, wherever the machine's own is.
        DOCKER_HOST: 'unix:///nonexistent/docker.sock',
        ...env,
      },
      cwd: tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...asNobody,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('pnpm test, before any suite starts', () => {
  it('stops with one message naming Redis, Chromium and the install command when it cannot get them', async () => {
    const path = pathWith('apt-get');
    const run = await runEntry({ PATH: path });
    expect(run.code).toBe(2);
    // Nothing ran: no Biome, no turbo, no suite.
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^pnpm test cannot start/);
    expect(run.stderr).toMatch(/Redis .*no redis-server on PATH and no Docker engine answered/);
    expect(run.stderr).toMatch(/Chromium .*no CHROMIUM_PATH/);
    if (which('apt-get')) expect(run.stderr).toContain('apt-get install -y redis-server chromium');
    expect(run.stderr).toContain('Or start a Docker engine');
    // One message, not a stack trace.
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(8);
  }, 10_000);

  it('names CHROMIUM_PATH when it does not point at a program', async () => {
    const run = await runEntry({ PATH: pathWith(), CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('CHROMIUM_PATH=/nonexistent/chromium is not an executable file');
  }, 10_000);

  it('names REDIS_URL when nothing answers there, without its password', async () => {
    const port = await freePort();
    const run = await runEntry({
      PATH: pathWith(),
      CHROMIUM_PATH: process.execPath,
      REDIS_URL: `redis://agent:s3cret-pass@127.0.0.1:${port}`,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`REDIS_URL=redis://agent:***@127.0.0.1:${port} does not answer a Redis PING`);
    expect(run.stderr).not.toContain('s3cret-pass');
  }, 10_000);

  it('still needs redis-server or Docker with a REDIS_URL, since the outage tests stop a Redis of their own', async () => {
    const redis = await startRedisProcess();
    cleanups.push(() => redis.stop());
    const run = await runEntry({ PATH: pathWith(), CHROMIUM_PATH: process.execPath, REDIS_URL: redis.url });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('REDIS_URL is set, but the outage tests stop and restart a Redis of their own');
  }, 10_000);

  it('takes REDIS_URL when it answers, and says so in one line', async () => {
    const redis = await startRedisProcess();
    cleanups.push(() => redis.stop());
    const run = await runEntry(
      { PATH: pathWith('redis-server'), CHROMIUM_PATH: process.execPath, REDIS_URL: redis.url },
      ['--check'],
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `pnpm test: Redis from REDIS_URL (${redis.url}) · Chromium: ${process.execPath} (CHROMIUM_PATH)\n`,
    );
  }, 10_000);

  it('starts a redis-server of its own when there is no REDIS_URL and no Docker, and stops it at the end', async () => {
    const run = await runEntry({ PATH: pathWith('redis-server'), CHROMIUM_PATH: process.execPath }, ['--check']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const line = run.stdout.match(
      /^pnpm test: Redis: a redis-server process \((.+)\) on 127\.0\.0\.1:(\d+) · Chromium: (.+) \(CHROMIUM_PATH\)\n$/,
    );
    expect(line, run.stdout).not.toBeNull();
    expect(dirname(line?.[1] ?? '')).not.toBe('');
    expect(await answersPing('127.0.0.1', Number(line?.[2]))).toBe(false);
  }, 10_000);

  it('finds a Chromium on PATH when CHROMIUM_PATH is not set', async () => {
    const browser = which('chromium') ?? which('google-chrome') ?? which('chromium-browser');
    expect(browser, 'pnpm test provides a Chromium before the suites run').toBeDefined();
    const path = pathWith('redis-server', 'chromium', 'google-chrome', 'chromium-browser');
    const run = await runEntry({ PATH: path }, ['--check']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/· Chromium: .*\/(chromium|google-chrome|chromium-browser)\n$/);
  }, 10_000);
});
