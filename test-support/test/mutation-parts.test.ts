// The Stryker configs find the parts of a file to mutate by markers in the source, not by line
// numbers that drift: what a marked file gives, and the clear error for every way to mark it wrong.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FROM, markedParts, TO } from '../mutation-parts.mjs';

const dir = mkdtempSync(join(tmpdir(), 'mutation-parts-'));
/** The config's URL, as a config in `dir` would pass it, after writing `file` there. */
function configFor(file: string, lines: string[]): string {
  writeFileSync(join(dir, file), lines.join('\n'));
  return pathToFileURL(join(dir, 'stryker.config.mjs')).href;
}

describe('markedParts', () => {
  it('gives each marked part as its first and last line, markers left out, indented ones too', () => {
    const url = configFor('a.ts', ['a', FROM, 'b', 'c', `  ${TO}`, 'd', `    ${FROM}`, 'e', TO]);
    expect(markedParts(url, 'a.ts')).toEqual(['a.ts:3-4', 'a.ts:8-8']);
  });

  it('refuses a file with no part, a part never closed, one closed before it opened, and an empty one', () => {
    expect(() => markedParts(configFor('none.ts', ['a', 'b']), 'none.ts')).toThrow(
      `none.ts: no part marked between "${FROM}" and "${TO}"`,
    );
    expect(() => markedParts(configFor('open.ts', ['a', FROM, 'b']), 'open.ts')).toThrow(
      `open.ts:2: "${FROM}" never closed by "${TO}"`,
    );
    expect(() => markedParts(configFor('twice.ts', [FROM, 'a', FROM, 'b', TO]), 'twice.ts')).toThrow(
      `twice.ts:3: "${FROM}" again before "${TO}"`,
    );
    expect(() => markedParts(configFor('closed.ts', ['a', TO]), 'closed.ts')).toThrow(
      `closed.ts:2: "${TO}" without a "${FROM}" and a line of code before it`,
    );
    expect(() => markedParts(configFor('empty.ts', [FROM, TO]), 'empty.ts')).toThrow(
      `empty.ts:2: "${TO}" without a "${FROM}" and a line of code before it`,
    );
  });

  it('takes the marker only as a line of its own, not inside other text', () => {
    const url = configFor('quoted.ts', [`const s = '${FROM}';`, FROM, 'x', TO]);
    expect(markedParts(url, 'quoted.ts')).toEqual(['quoted.ts:3-3']);
  });
});
