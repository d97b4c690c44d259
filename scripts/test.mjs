#!/usr/bin/env node
// `pnpm test`: first provides what the suites need (a Redis, a Chromium; see
// test-support/prerequisites.mjs) and says in one line what it chose, or stops at once with one
// message naming what is missing. Then Biome, then turbo's typecheck and test tasks with that
// Redis and Chromium, then it stops what it started.
//
//   pnpm test                                  everything
//   pnpm test --filter=@agentwire/toy-api      extra arguments go to turbo
//   node scripts/test.mjs --check              only find or provide the prerequisites, and say what
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PrerequisiteError, provide } from '../test-support/prerequisites.mjs';

const args = process.argv.slice(2);
const checkOnly = args.includes('--check');
const turboArgs = args.filter((a) => a !== '--check');
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));
const say = (line) => process.stdout.write(`pnpm test: ${line}\n`);

let provided;
try {
  provided = await provide({ log: say });
} catch (error) {
  if (!(error instanceof PrerequisiteError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
say(provided.summary);

let child;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    child?.kill(signal);
  });
}

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
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

let status = 0;
try {
  if (!checkOnly) {
    status = await run('biome', ['ci', '--colors=off', '.']);
    if (status === 0 && !interrupted) status = await run('turbo', ['run', 'typecheck', 'test', ...turboArgs]);
  }
} finally {
  await provided.stop();
}
process.exit(interrupted && status === 0 ? 130 : status);
