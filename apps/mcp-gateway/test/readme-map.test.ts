// The README's "How it is built inside" names every source file of the gateway, so a reader
// finds where a behaviour lives; a file added without a line there fails this test.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith('.ts') ? [path] : [];
  });
}

it('names every source file in the README map', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const map = readme.slice(readme.indexOf('## How it is built inside'), readme.indexOf('## Why the protocol core'));
  // A line of the map is a path and its job; an indented path is relative to the folder line above it.
  let folder = '';
  const resolved = new Set<string>();
  for (const line of map.split('\n')) {
    const dir = /^(\w+)\/\s/.exec(line);
    if (dir) folder = `${dir[1]}/`;
    const file = /^(\s*)(\S+\.ts)\s/.exec(line);
    if (file?.[2]) resolved.add(file[1] ? `${folder}${file[2]}` : file[2]);
  }
  expect(resolved.size).toBeGreaterThan(40);
  const files = sourceFiles(join(ROOT, 'src')).map((f) => relative(join(ROOT, 'src'), f));
  expect(files.filter((f) => !resolved.has(f))).toEqual([]);
  expect([...resolved].filter((f) => !files.includes(f))).toEqual([]);
});
