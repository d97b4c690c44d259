import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const FLAGS = fileURLToPath(new URL('../dist/runtime-flags.js', import.meta.url));
// Objects from one site that all outlive the young generation: V8 pretenures the site (it says
// so under --trace-pretenuring-statistics) unless pretenuring is off.
const WORKLOAD = `
const keep = [];
function make(i) { return { a: i, b: i + 1, c: i + 2 }; }
function round(n) { for (let i = 0; i < n; i++) keep.push(make(i)); }
for (let r = 0; r < 300; r++) round(10000);
`;

function tenured(nodeArgs: string[]): number {
  const out = execFileSync(
    process.execPath,
    ['--trace-pretenuring', '--trace-pretenuring-statistics', ...nodeArgs, '--input-type=module', '-e', WORKLOAD],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return out.split('\n').filter((line) => line.includes('=> tenure')).length;
}

describe("the gateway command's V8 settings", () => {
  it('turn allocation-site pretenuring off, unless node is started with it named', () => {
    expect(tenured([])).toBeGreaterThan(0);
    expect(tenured(['--import', FLAGS])).toBe(0);
    expect(tenured(['--allocation-site-pretenuring', '--import', FLAGS])).toBeGreaterThan(0);
  });
});
