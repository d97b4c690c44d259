// Small helpers shared by the benchmark runner and its processes.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));

export const median = (xs) => {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Starts `node <script> ...args` and resolves once it prints its first line (a URL or "ready").
 * The process is killed if it does not answer within 20 s.
 */
export async function startProcess(script, args = [], { env = {}, nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
    cwd: BENCH_DIR,
  });
  const lines = createInterface({ input: child.stdout });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [first] = await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`${script} exited with ${code} before it was ready`);
    }),
  ]);
  clearTimeout(timer);
  return {
    child,
    lines,
    line: first,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** Runs `node <script> <json>` to completion and parses the JSON it prints last. */
export async function runJson(script, input, { nodeArgs = [] } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, script, JSON.stringify(input)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: BENCH_DIR,
  });
  let out = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`${script} exited with ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1));
}

/** CPU time (user + system) a process has used so far, in µs; /proc counts in ticks of 10 ms. */
export function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Resident set size of a process, from /proc (Linux), in MB. */
/**
 * `calls` requests, `inFlight` at a time, each answered 200 without `"isError":true`; the
 * server's own CPU µs per call (from /proc) and the calls per second.
 */
export async function cpuPerCall(pid, calls, send, inFlight = 16) {
  const cpu0 = cpuMicros(pid);
  const t0 = performance.now();
  let left = calls;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (left-- > 0) {
        const r = await send();
        if (r.status !== 200 || r.text.includes('"isError":true'))
          throw new Error(`${r.status} ${r.text.slice(0, 200)}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { cpuUs: (cpuMicros(pid) - cpu0) / calls, rps: calls / seconds };
}

export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  return kb / 1024;
}

export const round = (n, digits = 2) => Number(n.toFixed(digits));
