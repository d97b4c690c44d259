#!/usr/bin/env node
// `pnpm test:mutation`: Stryker on the code that guards, one package after another (their
// stryker.config.mjs say which files). Each run is incremental: it re-tests only the mutants
// whose code or tests changed since its result file (mutation/stryker-incremental.json,
// committed), so a run on an unchanged tree costs one test run per package. A package whose
// score falls below 85% fails the run.
//   usage: pnpm test:mutation [--only toy-api,mcp-gateway,http-client,oauth] [--force]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = {
  'http-client': 'packages/http-client',
  'toy-api': 'apps/toy-api',
  'mcp-gateway': 'apps/mcp-gateway',
  oauth: 'packages/oauth',
};
const { values } = parseArgs({ options: { only: { type: 'string' }, force: { type: 'boolean', default: false } } });
const chosen = values.only ? values.only.split(',') : Object.keys(PACKAGES);
const unknown = chosen.filter((name) => !(name in PACKAGES));
if (unknown.length > 0) {
  console.error(
    `test:mutation: unknown package ${unknown.join(', ')}; choose from ${Object.keys(PACKAGES).join(', ')}`,
  );
  process.exit(2);
}

const scores = [];
let failed = false;
for (const name of chosen) {
  const dir = join(ROOT, PACKAGES[name]);
  const started = Date.now();
  console.log(`== mutation testing ${name}`);
  const run = spawnSync('pnpm', ['exec', 'stryker', 'run', ...(values.force ? ['--force'] : [])], {
    cwd: dir,
    stdio: 'inherit',
  });
  const report = JSON.parse(readFileSync(join(dir, 'mutation/report.json'), 'utf8'));
  let killed = 0;
  let total = 0;
  for (const file of Object.values(report.files)) {
    for (const mutant of file.mutants) {
      if (['Ignored', 'CompileError', 'RuntimeError'].includes(mutant.status)) continue;
      total++;
      if (['Killed', 'Timeout'].includes(mutant.status)) killed++;
    }
  }
  const score = total === 0 ? 100 : (100 * killed) / total;
  scores.push({
    package: name,
    mutants: total,
    killed,
    score: `${score.toFixed(1)}%`,
    seconds: Math.round((Date.now() - started) / 1000),
  });
  if (run.status !== 0 || score < 85) failed = true;
}
console.table(scores);
process.exit(failed ? 1 : 0);
