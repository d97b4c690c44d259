// `pnpm bench`: every comparison, side by side in one run. Each server runs in its own process
// and the load comes from yet another (autocannon, or a small client script); the sides of a
// comparison alternate round by round, and we report medians and ratios, because these
// machines are shared and noisy. One file per comparison in comparisons/; what they share
// (rounds, checks, rows, the result file) is lib/runner.mjs. Results go to
// bench/results/*.json and, for a full run, into the table in BENCHMARKS.md.
// Usage: pnpm bench [--quick] [--only 1,2,...] [--no-update]
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import * as toyApi from './comparisons/1-toy-api.mjs';
import * as toolsCallHttp from './comparisons/2-3-tools-call-http.mjs';
import * as stdio from './comparisons/4-stdio.mjs';
import * as latency from './comparisons/5-latency.mjs';
import * as httpClient from './comparisons/6-http-client.mjs';
import * as memory from './comparisons/7-memory.mjs';
import * as startup from './comparisons/8-startup.mjs';
import * as hostile from './comparisons/9-hostile.mjs';
import * as bigApis from './comparisons/10-big-apis.mjs';
import * as tracing from './comparisons/11-tracing.mjs';
import * as features from './comparisons/12-features.mjs';
import * as oauth from './comparisons/13-oauth.mjs';
import * as identity from './comparisons/14-identity.mjs';
import * as writes from './comparisons/15-writes.mjs';
import * as sick from './comparisons/16-sick-upstream.mjs';
import * as openLoop from './comparisons/17-open-loop.mjs';
import { createRunner } from './lib/runner.mjs';

// In this order: the ones that share a server run next to each other.
const COMPARISONS = [
  toyApi,
  httpClient,
  toolsCallHttp,
  latency,
  openLoop,
  stdio,
  memory,
  startup,
  hostile,
  bigApis,
  tracing,
  features,
  oauth,
  identity,
  writes,
  sick,
];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-update': { type: 'boolean', default: false },
  },
});
const only = values.only ? new Set(values.only.split(',').map(Number)) : undefined;
const want = (n) => !only || only.has(n);

const runner = await createRunner({ quick: values.quick });
const { rounds } = runner.settings;
try {
  console.log(
    `agentwire benchmarks${values.quick ? ' (quick)' : ''}: ${rounds} interleaved rounds, Node ${process.version}, ${availableParallelism()} cores`,
  );
  for (const comparison of COMPARISONS) {
    if (comparison.ids.some(want)) await comparison.run(runner, want);
  }
} finally {
  await runner.close();
}
runner.finish({
  command: `pnpm bench${values.quick ? ' --quick' : ''}${values.only ? ` --only ${values.only}` : ''}`,
  updateDoc: !values.quick && !values.only && !values['no-update'],
});
process.exit(0);
