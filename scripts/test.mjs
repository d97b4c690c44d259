#!/usr/bin/env node
// `pnpm test`: first provides what the suites need (a Redis, a Chromium; see
// test-support/prerequisites.mjs) and says in one line what it chose, or stops at once with one
// message naming what is missing. Then Biome, then turbo's typecheck and test tasks with that
// Redis and Chromium, then it stops what it started.
//
//   pnpm test                                  everything
//   pnpm test -- --filter=@agentwire/toy-api   other arguments go to turbo (after --, see below)
//   pnpm test --no-docker                      Redis from redis-server even when Docker answers
//   pnpm test --no-install                     never install a package, only say what is missing
//   node scripts/test.mjs --check              only find or provide the prerequisites, and say what
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PrerequisiteError, provide } from '../test-support/prerequisites.mjs';

const OWN_FLAGS = ['--check', '--no-docker', '--no-install'];
// `pnpm test -- --filter=...`: pnpm keeps a bare `--filter` for itself (it would run one
// package's own test script, past this file), so turbo's arguments come after `--`.
const given = process.argv.slice(2);
const dashes = given.indexOf('--');
const args = dashes < 0 ? given : [...given.slice(0, dashes), ...given.slice(dashes + 1)];
const turboArgs = args.filter((a) => !OWN_FLAGS.includes(a));
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) =>
  name === 'node' ? process.execPath : fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));
const say = (line) => process.stdout.write(`pnpm test: ${line}\n`);

// Whatever runs (a Redis, a suite) is stopped on Ctrl-C or SIGTERM, even while it is starting.
const redises = [];
let child;
let interrupted = false;
const stopRedises = () => Promise.all(redises.map((r) => r.stop().catch(() => undefined)));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    if (child) child.kill(signal);
    else stopRedises().then(() => process.exit(130));
  });
}

let provided;
try {
  provided = await provide({
    log: say,
    install: !args.includes('--no-install'),
    docker: !args.includes('--no-docker'),
    started: (redis) => redises.push(redis),
  });
} catch (error) {
  await stopRedises();
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    error instanceof PrerequisiteError ? `${message}\n` : `pnpm test cannot start: ${message.split('\n')[0]}\n`,
  );
  process.exit(2);
}
say(provided.summary);

function run(command, commandArgs) {
  return new Promise((resolve) => {
    child = spawn(bin(command), commandArgs, {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, ...provided.env, TURBO_TELEMETRY_DISABLED: '1' },
    });
    child.once('error', (error) => {
      process.stderr.write(`pnpm test: ${command}: ${error.message}\n`);
      resolve(1);
    });
    child.once('exit', (code, signal) => {
      child = undefined;
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

let status = 0;
try {
  if (!args.includes('--check')) {
    status = await run('biome', ['ci', '--colors=off', '.']);
    if (status === 0 && !interrupted) status = await run('node', ['scripts/import-cycles.mjs']);
    if (status === 0 && !interrupted) status = await run('turbo', ['run', 'typecheck', 'test', ...turboArgs]);
  }
} finally {
  await provided.stop();
}
process.exit(interrupted && status === 0 ? 130 : status);
