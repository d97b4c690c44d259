// Mutation testing of the code that guards (issue 22): the Host, Origin and token checks,
// session ids, path/query/header/cookie serialization, and where the upstream key goes.
// `pnpm test:mutation` from the repository root runs it; incremental, so a run re-tests only
// what changed since the result file (committed) was written. Never in place: the sandbox copy of
// this folder goes two levels below the repository root (<root>/.stryker-tmp/sandbox-*), as deep
// as the folder itself, so what the tests and configs reach by relative path
// (../../test-support, ../../tsconfig.base.json) resolves there as it does here, and the source
// files an editor, a build or another test reads are never the instrumented ones.
import { markedParts } from '../../test-support/mutation-parts.mjs';

// A part of a file is marked in its source (test-support/mutation-parts.mjs), not given as line numbers.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: [
    'src/transports/http/request-guards.ts',
    'src/sessions/session-store.ts',
    'src/openapi/parameter-styles.ts',
    // The caller's guards: which caller headers may go upstream, and the request's making
    // (path segments, query names, headers, forwarded headers, the key or the exchanged token).
    ...markedParts(import.meta.url, 'src/upstream/forward-headers.ts'),
    ...markedParts(import.meta.url, 'src/upstream/caller.ts'),
    // A job's status URL is followed with the upstream's credentials only under its base URL;
    // a task is seen only by its creator.
    ...markedParts(import.meta.url, 'src/upstream/jobs.ts'),
    ...markedParts(import.meta.url, 'src/tools/tasks.ts'),
    // Who may call which tool: declared scopes, allow and deny rules.
    'src/tools/access.ts',
    // A person's approval: which calls need it, the answer read, the signed state checked.
    ...markedParts(import.meta.url, 'src/tools/approval.ts'),
    // A keyed write: the key checked, scoped, leased, replayed, refused, kept or let go.
    'src/tools/writes.ts',
    // The memory store (the Redis one is Lua, run by the Redis tests and the chaos run).
    ...markedParts(import.meta.url, 'src/tools/write-store.ts'),
    // identity: connect: who may use a link (the same user, the issuer), each step once, from its
    // browser, before it expires; which refusal forgets a token; the memory store's locks and
    // counts, and a 401 forgetting only the token it was sent.
    ...markedParts(import.meta.url, 'src/connect/flow.ts'),
    ...markedParts(import.meta.url, 'src/connect/vault.ts'),
  ],
  coverageAnalysis: 'perTest',
  concurrency: 2,
  tempDirName: '../../.stryker-tmp',
  // Stryker rewrites a sandboxed tsconfig.json's `extends` for a sandbox in ./.stryker-tmp; this
  // one needs no rewrite, so that step is pointed at a file that does not exist (no type checker
  // plugin reads it).
  tsconfigFile: 'tsconfig.stryker-none.json',
  incremental: true,
  incrementalFile: 'mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'mutation/report.json' },
  thresholds: { high: 90, low: 85, break: 85 },
};
