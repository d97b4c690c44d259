#!/usr/bin/env node
// No import circle in our source: reads every relative import (static, dynamic and `export ...
// from`) in apps/*/src and packages/*/src, and fails naming each circle it finds (the strongly
// connected components of the graph, Tarjan's algorithm). Part of `pnpm lint` and `pnpm test`.
//   usage: node scripts/import-cycles.mjs [--graph]   (--graph prints each file's imports)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)|^import\s+'(\.[^']+)'/gm;

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const roots = ['apps', 'packages'].flatMap((group) =>
  readdirSync(join(ROOT, group))
    .map((name) => join(ROOT, group, name, 'src'))
    .filter((dir) => existsSync(dir)),
);
const files = roots.flatMap(sourceFiles);
const graph = new Map();
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const targets = new Set();
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3];
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    if (graph.has(target) || files.includes(target)) targets.add(target);
  }
  graph.set(file, [...targets]);
}

// Tarjan: every component of more than one file (or a file importing itself) is a circle.
let index = 0;
const stack = [];
const state = new Map();
const circles = [];
function visit(file) {
  const s = { index, low: index, onStack: true };
  index++;
  state.set(file, s);
  stack.push(file);
  for (const next of graph.get(file) ?? []) {
    const t = state.get(next);
    if (!t) {
      visit(next);
      s.low = Math.min(s.low, state.get(next).low);
    } else if (t.onStack) s.low = Math.min(s.low, t.index);
  }
  if (s.low !== s.index) return;
  const component = [];
  let top;
  do {
    top = stack.pop();
    state.get(top).onStack = false;
    component.push(top);
  } while (top !== file);
  if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component);
}
for (const file of graph.keys()) if (!state.has(file)) visit(file);

const show = (f) => relative(ROOT, f);
if (process.argv.includes('--graph')) {
  for (const [file, targets] of graph) console.log(`${show(file)} -> ${targets.map(show).join(', ') || '(none)'}`);
}
if (circles.length > 0) {
  for (const circle of circles) console.error(`import circle: ${circle.map(show).reverse().join(' -> ')}`);
  console.error(`import-cycles: ${circles.length} circle(s) in ${files.length} source files; break each one`);
  process.exit(1);
}
console.log(`import-cycles: no circle in ${files.length} source files (${roots.length} packages)`);
