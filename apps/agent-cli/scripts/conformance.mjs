// Runs the official MCP conformance suite's client scenarios against the agent (through
// scripts/conformance-client.mjs, which runs the real `agent` command). Every scenario that
// applies to an HTTP MCP client of 2025-06-18 and later runs; the rest are listed below by id,
// with why. A check that does not pass fails the run, except the ones named in EXCUSED, each
// by check id with its reason.
// Usage: node scripts/conformance.mjs [scenario ...]   (after pnpm build)   Exit 1 on a failure.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFORMANCE_CACHE, conformanceSuites } from '../../../test-support/conformance-suite.mjs';

const CACHE = CONFORMANCE_CACHE;
const CLIENT = fileURLToPath(new URL('./conformance-client.mjs', import.meta.url));

// Scenario -> the spec revision to run it at (its newest; initialize and sse-retry were removed
// in 2026-07-28, which has no initialize and no GET stream).
const SCENARIOS = [
  ['auth/metadata-default', '2026-07-28'],
  ['auth/metadata-var1', '2026-07-28'],
  ['auth/metadata-var2', '2026-07-28'],
  ['auth/metadata-var3', '2026-07-28'],
  ['auth/basic-cimd', '2026-07-28'],
  ['auth/scope-from-www-authenticate', '2026-07-28'],
  ['auth/scope-from-scopes-supported', '2026-07-28'],
  ['auth/scope-omitted-when-undefined', '2026-07-28'],
  ['auth/scope-step-up', '2026-07-28'],
  ['auth/scope-retry-limit', '2026-07-28'],
  ['auth/token-endpoint-auth-basic', '2026-07-28'],
  ['auth/token-endpoint-auth-post', '2026-07-28'],
  ['auth/token-endpoint-auth-none', '2026-07-28'],
  ['auth/pre-registration', '2026-07-28'],
  ['auth/resource-mismatch', '2026-07-28'],
  ['auth/offline-access-scope', '2026-07-28'],
  ['auth/offline-access-not-supported', '2026-07-28'],
  ['auth/authorization-server-migration', '2026-07-28'],
  ['auth/iss-supported', '2026-07-28'],
  ['auth/iss-not-advertised', '2026-07-28'],
  ['auth/iss-supported-missing', '2026-07-28'],
  ['auth/iss-wrong-issuer', '2026-07-28'],
  ['auth/iss-unexpected', '2026-07-28'],
  ['auth/iss-normalized', '2026-07-28'],
  ['auth/metadata-issuer-mismatch', '2026-07-28'],
  ['initialize', '2025-11-25'],
  ['sse-retry', '2025-11-25'],
  ['request-metadata', '2026-07-28'],
  ['http-standard-headers', '2026-07-28'],
  ['json-schema-ref-no-deref', '2026-07-28'],
  ['tools_call', '2026-07-28'],
  ['http-custom-headers', '2026-07-28'],
  ['http-invalid-tool-headers', '2026-07-28'],
  ['json-schema-2020-12-preservation', '2026-07-28'],
  ['sep-2322-client-request-state', '2026-07-28'],
];
// Not run, by scenario id:
// - auth/2025-03-26-oauth-metadata-backcompat, auth/2025-03-26-oauth-endpoint-fallback: the
//   2025-03-26 revision's discovery without protected-resource metadata; the agent speaks
//   2025-06-18 and later over HTTP (its SDK client drops the 2025-03-26 fallback).
// - auth/client-credentials-jwt, auth/client-credentials-basic, auth/enterprise-managed-authorization,
//   auth/dpop, auth/dpop-nonce, auth/wif-jwt-bearer: extensions, not part of the specification.
//   (The agent's client credentials are tested against our authorization server instead.)
const EXCUSED = new Map([]);

const { alpha: suite, node22 } = conformanceSuites();

const only = process.argv.slice(2);
const rows = [];
let failures = 0;
for (const [scenario, version] of SCENARIOS.filter(([s]) => only.length === 0 || only.includes(s))) {
  const out = join(CACHE, 'results', `client-${scenario.replace('/', '-')}-${Date.now()}`);
  mkdirSync(out, { recursive: true });
  const run = await new Promise((resolve) => {
    const child = spawn(node22, [
      suite,
      'client',
      '--command',
      `${process.execPath} ${CLIENT}`,
      '--scenario',
      scenario,
      '--spec-version',
      version,
      '-o',
      out,
    ]);
    let log = '';
    child.stdout.on('data', (c) => (log += c));
    child.stderr.on('data', (c) => (log += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, log });
    });
  });
  // Results are under <out>/auth/<scenario>-<time>/checks.json.
  const checks = readdirSync(out, { recursive: true })
    .filter((f) => String(f).endsWith('checks.json'))
    .flatMap((f) => JSON.parse(readFileSync(join(out, String(f)), 'utf8')));
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  const excused = bad.filter((c) => EXCUSED.has(c.id));
  const real = bad.filter((c) => !EXCUSED.has(c.id));
  if (checks.length === 0)
    real.push({ id: '(none)', errorMessage: `no checks (suite exit ${run.status}): ${run.log.slice(-600)}` });
  failures += real.length;
  rows.push({
    scenario,
    passed: checks.filter((c) => c.status === 'SUCCESS').length,
    failed: real.length,
    excused: excused.length,
  });
  for (const c of real)
    console.log(`FAIL ${scenario}: ${c.id} (${c.status}): ${c.errorMessage ?? c.description ?? ''}`);
  for (const c of excused) console.log(`n/a  ${scenario}: ${c.id}: ${EXCUSED.get(c.id)}`);
}
console.table(rows);
console.log(failures === 0 ? 'client conformance: every check passed' : `client conformance: ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
