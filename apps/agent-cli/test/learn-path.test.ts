// LEARN.md is a path through the lecture made of commands and what they print. This runs every
// command marked runnable (a ```sh run block) and checks that each excerpt after it (the
// ```text excerpt block) still appears in the output, line by line and in order, so the path
// cannot drift from the code. LEARN.zh.md must hold the same commands and excerpts.
//
// `pnpm agent` is the root script that builds the agent, then runs it; here the build is done
// (the test task depends on it), so the command runs the built agent directly.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_BIN } from './support/run-agent.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const LEARN = readFileSync(new URL('../../../LEARN.md', import.meta.url), 'utf8');
const LEARN_ZH = readFileSync(new URL('../../../LEARN.zh.md', import.meta.url), 'utf8');

interface Step {
  command: string;
  excerpt: string[];
}

/** The runnable blocks of a page, each with the excerpt that follows it. */
function stepsOf(page: string): Step[] {
  const steps: Step[] = [];
  const block = /```sh run\n([\s\S]*?)```\s*```text excerpt\n([\s\S]*?)```/g;
  for (const match of page.matchAll(block)) {
    steps.push({
      command: (match[1] ?? '').trim(),
      excerpt: (match[2] ?? '').split('\n').filter((line) => line.trim() !== ''),
    });
  }
  return steps;
}

const squeeze = (line: string) => line.trim().replace(/\s+/g, ' ');

/** An excerpt line as a pattern: spacing is free, and … stands for anything. */
function patternOf(line: string): RegExp {
  const parts = squeeze(line)
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('.*?'));
}

function run(command: string): Promise<{ code: number | null; output: string }> {
  const resolved = command.replace(/\bpnpm agent\b/g, `node ${AGENT_BIN}`);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', resolved], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output: `${stdout}\n${stderr}` }));
  });
}

const steps = stepsOf(LEARN);
// One run per distinct command; every excerpt shown after it is checked against that run.
const byCommand = new Map<string, string[][]>();
for (const step of steps) byCommand.set(step.command, [...(byCommand.get(step.command) ?? []), step.excerpt]);

describe('LEARN.md', () => {
  it('has a runnable command for every section and exercise, and LEARN.zh.md the same ones', () => {
    expect(steps.length).toBeGreaterThanOrEqual(20);
    for (const heading of ['§1', '§2', '§3', '§4', '§5', '§6', '§7', '§8']) expect(LEARN).toContain(`### ${heading} `);
    for (let n = 1; n <= 8; n++) expect(LEARN).toContain(`### Exercise ${n}:`);
    expect(stepsOf(LEARN_ZH)).toEqual(steps);
    expect(LEARN_ZH).toContain('LEARN.md');
  });

  describe.concurrent('every runnable command still prints what the page shows', () => {
    for (const [command, excerpts] of byCommand) {
      it(command, async () => {
        const { code, output } = await run(command);
        // 1 is how `agent call` and `agent validate` say the call failed, which the page shows on purpose.
        expect(code, output).toBeLessThanOrEqual(1);
        const lines = output.split('\n').map(squeeze);
        for (const excerpt of excerpts) {
          let from = 0;
          for (const line of excerpt) {
            const pattern = patternOf(line);
            const at = lines.findIndex((candidate, i) => i >= from && pattern.test(candidate));
            expect(at, `'${line}' (in order) in the output of ${command}:\n${output}`).toBeGreaterThanOrEqual(0);
            from = at + 1;
          }
        }
      }, 90_000);
    }
  });
});
