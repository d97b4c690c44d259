import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const FLAGS = pathToFileURL(fileURLToPath(new URL('../dist/runtime-flags.js', import.meta.url))).href;
// Objects from one site that all outlive the young generation: V8 pretenures the site (it says
// so under --trace-pretenuring-statistics) unless pretenuring is off. A million small objects,
// about 150 MB at its peak.
const WORKLOAD = `
const keep = [];
function make(i) { return { a: i, b: i + 1, c: i + 2 }; }
function round(n) { for (let i = 0; i < n; i++) keep.push(make(i)); }
for (let r = 0; r < 100; r++) round(10000);
`;

/** How many sites V8 tenured, in a process started with `nodeArgs`, the module imported first or not. */
function tenured(nodeArgs: string[], withModule: boolean): number {
  const source = `${withModule ? `import ${JSON.stringify(FLAGS)};\n` : ''}${WORKLOAD}`;
  const out = execFileSync(
    process.execPath,
    ['--trace-pretenuring', '--trace-pretenuring-statistics', ...nodeArgs, '--input-type=module', '-e', source],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return out.split('\n').filter((line) => line.includes('=> tenure')).length;
}

describe("the gateway command's V8 settings", () => {
  it('turn allocation-site pretenuring off, unless node is started with it named', () => {
    expect(tenured([], false)).toBeGreaterThan(0);
    expect(tenured([], true)).toBe(0);
    expect(tenured(['--allocation-site-pretenuring'], true)).toBeGreaterThan(0);
    expect(tenured(['--allocation_site_pretenuring'], true)).toBeGreaterThan(0);
  });
});
