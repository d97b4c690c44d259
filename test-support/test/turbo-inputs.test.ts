// turbo replays a cached green test run when none of the task's inputs changed. So every file a
// test reads from outside its own package (a shared helper, .env.example, a script) must be
// one of the test task's inputs in turbo.json, or an edit to it would not run the tests again.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = [
  'apps/toy-api',
  'apps/mcp-gateway',
  'apps/agent-cli',
  'packages/http-client',
  'packages/schemas',
  'packages/tool-tokens',
  'test-support',
  'integration',
];

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (/\.(ts|mts|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

/** Relative paths a file imports or reads: `from '../x'`, `import('../x')`, `new URL('../x', import.meta.url)`. */
function referencedPaths(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const pattern of [
    /from\s+'(\.{1,2}\/[^']+)'/g,
    /import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g,
    /new URL\(\s*'(\.{1,2}\/[^']+)',\s*import\.meta\.url\)/g,
  ]) {
    for (const match of text.matchAll(pattern)) found.push(resolve(dirname(file), match[1] ?? ''));
  }
  return found;
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*/g, '\0')
    .replace(/\*/g, '[^/]*');
  return new RegExp(`^${escaped.replaceAll('\0', '.*')}$`);
}

describe('turbo.json', () => {
  it('lists as a test input every file a test reads from outside its package', () => {
    const turbo = JSON.parse(readFileSync(join(ROOT, 'turbo.json'), 'utf8')) as {
      tasks: { test: { inputs: string[] } };
    };
    const rootInputs = turbo.tasks.test.inputs
      .filter((input) => input.startsWith('$TURBO_ROOT$/'))
      .map((input) => globToRegExp(input.slice('$TURBO_ROOT$/'.length)));
    const missing = new Set<string>();
    let checked = 0;
    for (const pkg of PACKAGES) {
      const pkgDir = join(ROOT, pkg);
      for (const file of filesUnder(join(pkgDir, 'test'))) {
        for (const target of referencedPaths(file)) {
          const fromRoot = relative(ROOT, target);
          // A directory (the repository itself, as a Docker build context) is not a file input.
          if (statSync(target, { throwIfNoEntry: false })?.isDirectory()) continue;
          // Inside the package (src, test): its own inputs; a sibling package: through its build.
          if (!relative(pkgDir, target).startsWith('..')) continue;
          if (/^(apps|packages)\/[^/]+\/(src|dist)\//.test(fromRoot)) continue;
          checked++;
          const candidates = [
            fromRoot,
            `${fromRoot}.ts`,
            fromRoot.replace(/\.js$/, '.ts'),
            fromRoot.replace(/\.js$/, '.mts'),
          ];
          if (!candidates.some((c) => rootInputs.some((glob) => glob.test(c)))) {
            missing.add(`${relative(ROOT, file)} reads ${fromRoot}`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect([...missing]).toEqual([]);
  });
});
