// `pnpm test` on a machine that lacks what the suites need: it stops before any suite starts with
// one message that names what is missing and how to get it, or says in one line what it chose.
// Each case runs the real entry point (scripts/test.mjs) as a process, with a PATH made for the
// case, `--no-docker` (so a Docker engine on the machine does not change the answer) and
// `--no-install` (so nothing is installed, as for a user who is not root).
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { answersPing, findChromium, freePort, startRedisProcess, which } from '../prerequisites.mjs';

const ENTRY = fileURLToPath(new URL('../../scripts/test.mjs', import.meta.url));
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A folder holding only the named programs (links to the real ones), to use as PATH. */
function pathWith(...programs: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-path-'));
  chmodSync(dir, 0o755);
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

/** Runs `node scripts/test.mjs --no-docker --no-install ARGS` with only this environment. */
function runEntry(env: Record<string, string>, args: string[] = ['--check']): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ENTRY, '--no-docker', '--no-install', ...args], {
      env: { HOME: tmpdir(), ...env },
      cwd: tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
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
    const run = await runEntry({ PATH: pathWith('apt-get') }, []);
    expect(run.code).toBe(2);
    // Nothing ran: no Biome, no turbo, no suite.
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^pnpm test cannot start/);
    expect(run.stderr).toMatch(/\n {2}Redis +no redis-server on PATH \(and Docker not used: --no-docker\)\n/);
    expect(run.stderr).toMatch(/\n {2}Chromium +no CHROMIUM_PATH and no chromium, .*chrome found\n/);
    if (which('apt-get')) expect(run.stderr).toMatch(/apt-get update && (sudo )?apt-get install -y redis-server/);
    expect(run.stderr).toContain('Or set CHROMIUM_PATH');
    // One message, not a stack trace.
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(6);
  }, 10_000);

  it('names CHROMIUM_PATH when it does not point at a program', async () => {
    const run = await runEntry({ PATH: pathWith('redis-server'), CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('CHROMIUM_PATH=/nonexistent/chromium is not an executable file');
  }, 10_000);

  it('names REDIS_URL when nothing answers there, without its password', async () => {
    const port = await freePort();
    const run = await runEntry({
      PATH: pathWith('redis-server'),
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
    expect(run.stderr).not.toContain('Chromium ');
  }, 10_000);

  it('takes REDIS_URL when it answers, and says so in one line', async () => {
    const redis = await startRedisProcess();
    cleanups.push(() => redis.stop());
    const run = await runEntry({
      PATH: pathWith('redis-server'),
      CHROMIUM_PATH: process.execPath,
      REDIS_URL: redis.url,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `pnpm test: Redis from REDIS_URL (${redis.url}) · Chromium: ${process.execPath} (CHROMIUM_PATH)\n`,
    );
  }, 10_000);

  it('starts a redis-server of its own when there is no REDIS_URL, and stops it at the end', async () => {
    const run = await runEntry({ PATH: pathWith('redis-server'), CHROMIUM_PATH: process.execPath });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const line = run.stdout.match(
      /^pnpm test: Redis: a redis-server process \(.+\/redis-server\) on 127\.0\.0\.1:(\d+) · Chromium: (.+) \(CHROMIUM_PATH\)\n$/,
    );
    expect(line, run.stdout).not.toBeNull();
    expect(await answersPing('127.0.0.1', Number(line?.[1]))).toBe(false);
  }, 10_000);

  it('finds an installed Chromium when CHROMIUM_PATH is not set', async () => {
    const path = pathWith('redis-server', 'chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome');
    const expected = findChromium({ PATH: path });
    expect(expected, 'pnpm test provides a Chromium before the suites run').toBeDefined();
    const run = await runEntry({ PATH: path });
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(new RegExp(` · Chromium: ${expected?.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n$`));
  }, 10_000);

  it('exits with the failure of what it runs, after saying what it chose', async () => {
    const redis = await startRedisProcess();
    cleanups.push(() => redis.stop());
    const run = await runEntry(
      { PATH: pathWith('redis-server', 'git'), CHROMIUM_PATH: process.execPath, REDIS_URL: redis.url },
      // As pnpm passes `pnpm test -- --filter=...`: the filter must reach turbo as a filter.
      ['--', '--filter=@agentwire/no-such-package'],
    );
    expect(run.stdout).toContain('pnpm test: Redis from REDIS_URL');
    expect(`${run.stdout}${run.stderr}`).toMatch(/No package found with name '@agentwire\/no-such-package'/);
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBe(2);
  }, 20_000);
});
