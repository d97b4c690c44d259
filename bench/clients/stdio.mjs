// Comparison 4: tool calls per second over stdio. Spawns the server, initializes, then makes
// `calls` tools/call requests one at a time, and `calls` more with `window` of them in flight
// (pipelined: the next is written as soon as one answers). Checks every answer. Also reports the
// server process's own CPU per call over both phases and in each, from /proc (Linux).
// Usage: node clients/stdio.mjs '{"command":[...],"env":{...},"calls":2000,"window":32}'
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** User + system CPU of a process so far, in µs (clock ticks of 10 ms). */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const { command, env = {}, calls, window } = JSON.parse(process.argv[2]);
const child = spawn(command[0], command.slice(1), {
  stdio: ['pipe', 'pipe', 'ignore'],
  env: { ...process.env, ...env },
});
const waiting = new Map();
createInterface({ input: child.stdout }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const resolve = waiting.get(message.id);
  waiting.delete(message.id);
  resolve?.(message);
});
let nextId = 0;
function send(method, params) {
  const id = ++nextId;
  const answered = new Promise((resolve) => waiting.set(id, resolve));
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  return answered;
}
const call = async () => {
  const answer = await send('tools/call', { name: 'office_days', arguments: { employee_id: 'e-05' } });
  if (answer.error || answer.result?.isError) throw new Error(`bad answer: ${JSON.stringify(answer).slice(0, 300)}`);
};

const init = await send('initialize', {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'agentwire-bench', version: '1' },
});
if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
for (let i = 0; i < 100; i++) await call();

const cpu0 = cpuMicros(child.pid);
let t0 = performance.now();
for (let i = 0; i < calls; i++) await call();
const sequential = calls / ((performance.now() - t0) / 1000);
const cpu1 = cpuMicros(child.pid);

t0 = performance.now();
let started = 0;
await Promise.all(
  Array.from({ length: window }, async () => {
    while (started < calls) {
      started++;
      await call();
    }
  }),
);
const pipelined = calls / ((performance.now() - t0) / 1000);
const cpu2 = cpuMicros(child.pid);
const cpuUs = (cpu2 - cpu0) / (2 * calls);
child.kill();
// Also per phase: one at a time, each call wakes both processes; in flight, wake-ups are shared.
const cpuUsSequential = (cpu1 - cpu0) / calls;
const cpuUsPipelined = (cpu2 - cpu1) / calls;
process.stdout.write(`${JSON.stringify({ sequential, pipelined, cpuUs, cpuUsSequential, cpuUsPipelined })}\n`);
