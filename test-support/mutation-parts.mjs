// Stryker takes a part of a file as line numbers (`file:first-last`), and line numbers drift as
// the file changes: a drift once left a function's body out of the run, unnoticed. So the parts
// are marked in the source, each between a `// mutation testing: from here` line and a
// `// mutation testing: to here` line, and the configs find them when they load.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const FROM = '// mutation testing: from here';
export const TO = '// mutation testing: to here';

/**
 * Every marked part of `file` (a path from the folder of `configUrl`, the config's own
 * import.meta.url) as Stryker's `file:first-last`. Throws for a file with no part, a part not
 * closed, or one closed before it opened: a run that silently mutates less is what this prevents.
 */
export function markedParts(configUrl, file) {
  const lines = readFileSync(fileURLToPath(new URL(file, configUrl)), 'utf8').split('\n');
  const parts = [];
  let first;
  lines.forEach((line, index) => {
    const text = line.trim();
    if (text === FROM) {
      if (first !== undefined) throw new Error(`${file}:${index + 1}: "${FROM}" again before "${TO}"`);
      first = index + 2;
    } else if (text === TO) {
      if (first === undefined || first > index) {
        throw new Error(`${file}:${index + 1}: "${TO}" without a "${FROM}" and a line of code before it`);
      }
      parts.push(`${file}:${first}-${index}`);
      first = undefined;
    }
  });
  if (first !== undefined) throw new Error(`${file}:${first - 1}: "${FROM}" never closed by "${TO}"`);
  if (parts.length === 0) throw new Error(`${file}: no part marked between "${FROM}" and "${TO}"`);
  return parts;
}

/**
 * For a package's test: loads its Stryker config (which fails on a marker lost or unpaired),
 * checks that every file it names exists, and gives the file of each marked part, in order.
 */
export async function markedFilesOf(configUrl) {
  const { default: config } = await import(String(configUrl));
  for (const entry of config.mutate) {
    const file = entry.split(':')[0];
    if (!existsSync(fileURLToPath(new URL(file, configUrl)))) throw new Error(`${entry}: no such file`);
  }
  return config.mutate.filter((entry) => /:\d+-\d+$/.test(entry)).map((entry) => entry.split(':')[0]);
}
