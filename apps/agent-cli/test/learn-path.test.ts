// LEARN.md is a path through the lecture made of commands and what they print. This runs every
// command marked runnable (a ```sh run block) and checks that each excerpt (a ```text excerpt
// block) still appears in its output, line by line and in order, so the path cannot drift from
// the code. An excerpt right after a command quotes that command; one headed
// ```text excerpt: COMMAND quotes a command run earlier on the page (a lab runs once and is
// quoted by several sections). A command block that is not run says so (```sh sketch). The
// Chinese page must hold the same commands, excerpts and sketches, and neither page may point
// at a path that is not in the repository.
//
// `pnpm agent` is the root script that builds the agent, then runs it; here the build is done
// (the test task depends on it), so the command runs the built agent directly.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_BIN } from './support/run-agent.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const LEARN = readFileSync(new URL('../../../LEARN.md', import.meta.url), 'utf8');
const LEARN_ZH = readFileSync(new URL('../../../LEARN.zh.md', import.meta.url), 'utf8');

interface Page {
  /** Each runnable command once, in page order, with every excerpt that quotes it. */
  runs: Map<string, string[][]>;
  sketches: string[];
  /** What is wrong with the page's blocks: an unmarked command, an excerpt that quotes nothing, a command run twice. */
  problems: string[];
  mermaid: number;
}

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

/** The page's fenced blocks, read in order. */
function pageOf(text: string): Page {
  const page: Page = { runs: new Map(), sketches: [], problems: [], mermaid: 0 };
  let previous: { info: string; body: string } | undefined;
  for (const match of text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```/gm)) {
    const info = (match[1] ?? '').trim();
    const body = (match[2] ?? '').trim();
    if (info === 'sh run') {
      if (page.runs.has(body)) page.problems.push(`runs twice (run it once and quote it): ${body}`);
      else page.runs.set(body, []);
    } else if (info === 'sh sketch') page.sketches.push(body);
    else if (/^(sh|bash|shell|console)\b/.test(info))
      page.problems.push(`a command block neither run nor marked a sketch: ${body}`);
    else if (info === 'mermaid') page.mermaid++;
    else if (info.startsWith('text excerpt')) {
      const named = /^text excerpt: (.+)$/.exec(info)?.[1]?.trim();
      const command = named ?? (previous?.info === 'sh run' ? previous.body : undefined);
      const quoted = command === undefined ? undefined : page.runs.get(command);
      if (quoted === undefined)
        page.problems.push(`an excerpt that quotes no command run before it (${named ?? 'unnamed'}): ${body}`);
      else quoted.push(lines(body));
    }
    previous = { info, body };
  }
  return page;
}

/**
 * The repository paths a page points at: link targets, and `code` that names a file or folder
 * of the repository. A path outside it (`../...`, `/...`) is reported as such.
 */
function pathsOf(text: string): string[] {
  const paths = new Set<string>();
  for (const match of text.matchAll(/\]\(([^)\s#]+)[^)]*\)/g)) {
    const target = match[1] ?? '';
    if (!/^[a-z]+:/.test(target)) paths.add(target);
  }
  for (const match of text.matchAll(/`([^`\s]+)`/g)) {
    const code = match[1] ?? '';
    if (/^(\.\.\/|(apps|packages|examples|scripts|bench|docs)\/)/.test(code) || /^[\w.-]+\.md$/.test(code))
      paths.add(code);
  }
  return [...paths];
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

const en = pageOf(LEARN);
const zh = pageOf(LEARN_ZH);

describe('LEARN.md', () => {
  it('has a runnable command for every section and exercise, and LEARN.zh.md the same ones', () => {
    expect(en.problems).toEqual([]);
    expect(zh.problems).toEqual([]);
    expect(en.runs.size).toBeGreaterThanOrEqual(25);
    for (const heading of ['§1', '§2', '§3', '§4', '§5', '§6', '§7', '§8']) {
      expect(LEARN).toContain(`### ${heading} `);
      expect(LEARN_ZH).toContain(`### ${heading} `);
    }
    for (let n = 1; n <= 8; n++) {
      expect(LEARN).toContain(`### Exercise ${n}:`);
      expect(LEARN_ZH).toContain(`### 练习 ${n}`);
    }
    // Every exercise keeps its answer folded until the reader has written one.
    for (const page of [LEARN, LEARN_ZH]) {
      const exercises = page.slice(
        page.indexOf('### Exercise 1') >= 0 ? page.indexOf('### Exercise 1') : page.indexOf('### 练习 1'),
      );
      expect(exercises.split(/^### /m).filter((part) => /<details>/.test(part)).length).toBeGreaterThanOrEqual(8);
    }
    expect(en.mermaid).toBeGreaterThanOrEqual(4);
    expect(zh.mermaid).toBe(en.mermaid);
    expect([...zh.runs]).toEqual([...en.runs]);
    expect(zh.sketches).toEqual(en.sketches);
    expect(LEARN_ZH).toContain('LEARN.md');
  });

  it('points only at paths inside the repository, and each of them exists', () => {
    for (const [name, page] of [
      ['LEARN.md', LEARN],
      ['LEARN.zh.md', LEARN_ZH],
    ] as const) {
      expect(page, `${name} points outside the repository`).not.toMatch(/\.\.\/|shared\/seed/);
      const paths = pathsOf(page);
      expect(paths.length).toBeGreaterThan(20);
      const missing = paths.filter((path) => path.startsWith('/') || !existsSync(`${ROOT}${path}`));
      expect(missing, `${name} points at paths that are not in the repository`).toEqual([]);
    }
  });

  describe.concurrent('every runnable command still prints what the page shows', () => {
    for (const [command, excerpts] of en.runs) {
      it(command, async () => {
        const { code, output } = await run(command);
        // 1 is how `agent call`, `validate` and `check` say the call failed or the answer was wrong, which the page shows on purpose.
        expect(code, output).toBeLessThanOrEqual(1);
        const outputLines = output.split('\n').map(squeeze);
        for (const excerpt of excerpts) {
          let from = 0;
          for (const line of excerpt) {
            const pattern = patternOf(line);
            const at = outputLines.findIndex((candidate, i) => i >= from && pattern.test(candidate));
            expect(at, `'${line}' (in order) in the output of ${command}:\n${output}`).toBeGreaterThanOrEqual(0);
            from = at + 1;
          }
        }
      }, 90_000);
    }
  });
});
