// The mutation run's config (stryker.config.mjs) finds the parts of files it mutates by markers
// in the source, not line numbers (test-support/mutation-parts.mjs): it loads only when every
// file it names a part of is marked right, so a marker lost in an edit fails here, not silently.
import { expect, it } from 'vitest';
import { markedFilesOf } from '../../../test-support/mutation-parts.mjs';

it('loads, and names files that exist, parts of them by marker', async () => {
  // Every marked part, one entry each: a pair of markers lost with both its lines shows here.
  expect(await markedFilesOf(new URL('../stryker.config.mjs', import.meta.url))).toEqual([
    'src/upstream/forward-headers.ts',
    'src/upstream/caller.ts',
    'src/upstream/caller.ts',
    'src/upstream/jobs.ts',
    'src/tools/tasks.ts',
    'src/tools/approval.ts',
    'src/tools/approval.ts',
    'src/tools/write-store.ts',
    'src/connect/flow.ts',
    'src/connect/flow.ts',
    'src/connect/flow.ts',
    'src/connect/vault.ts',
    'src/connect/vault.ts',
  ]);
});
