// The mutation run's config (stryker.config.mjs) finds the parts of files it mutates by markers
// in the source, not line numbers (test-support/mutation-parts.mjs): it loads only when every
// file it names a part of is marked right, so a marker lost in an edit fails here, not silently.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

it('loads, and names files that exist, parts of them by marker', async () => {
  const config = (await import(new URL('../stryker.config.mjs', import.meta.url).href)) as {
    default: { mutate: string[] };
  };
  const { mutate } = config.default;
  for (const entry of mutate) {
    const file = entry.split(':')[0] ?? '';
    expect(existsSync(fileURLToPath(new URL(`../${file}`, import.meta.url))), entry).toBe(true);
  }
  // Every marked part, one entry each: a pair of markers lost with both its lines shows here.
  expect(mutate.filter((entry) => /:\d+-\d+$/.test(entry)).map((entry) => entry.split(':')[0])).toEqual([
    'src/upstream/forward-headers.ts',
    'src/upstream/caller.ts',
    'src/upstream/caller.ts',
    'src/upstream/jobs.ts',
    'src/tools/tasks.ts',
    'src/tools/approval.ts',
    'src/tools/approval.ts',
    'src/tools/write-store.ts',
  ]);
});
