// Runs the official MCP conformance suite's authorization-server scenarios against our
// authorization server: its RFC 8414 metadata, and an authorization code grant that a person
// completes in a browser (here Chromium, driven through the sign-in and consent pages).
// The suite needs Node 22; the gateway's conformance script installs it and the suite into the
// same cache folder, and this one does too if they are missing.
// Usage: node scripts/conformance.mjs   (after pnpm build)   Exit 1 on any failed check.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { CONFORMANCE_CACHE, conformanceSuites } from '../../../test-support/conformance-suite.mjs';
import { AGENT_CLIENT, loadOrCreateKeys, startAuthServer } from '../dist/index.js';

const CACHE = CONFORMANCE_CACHE;
const EXPECTED_CHECKS = [
  'authorization-server-metadata',
  'authorization-server-metadata-cimd',
  'authorization-code-grant',
];

const { alpha: suite, node22 } = conformanceSuites();

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const password = randomBytes(8).toString('hex');
const resource = 'http://127.0.0.1:8090/mcp';
const keys = await loadOrCreateKeys(join(mkdtempSync(join(tmpdir(), 'as-conformance-')), 'keys.json'));
const auth = await startAuthServer({
  host: '127.0.0.1',
  port: 0,
  keys: keys.keys,
  resources: { [resource]: ['emails:read', 'digest:read', 'replies:write', 'admin'] },
  demoPassword: password,
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
});

const out = join(CACHE, 'results', `authorization-server-${Date.now()}`);
mkdirSync(out, { recursive: true });
const port = await freePort();
// Every authorization-server scenario in one run: the code grant reads the metadata scenario's result.
const child = spawn(node22, [
  suite,
  'authorization',
  '--url',
  auth.issuer,
  // The agent's client: public, PKCE. (With a secret the suite still picks `none`, the first
  // method the metadata lists, so a confidential client cannot be what it tests here.)
  '--client-id',
  AGENT_CLIENT.client_id,
  '--resource',
  resource,
  '-p',
  String(port),
  '-o',
  out,
]);
let log = '';
child.stderr.on('data', (c) => (log += c));
let signIn = Promise.resolve();
let expectUrl = false;
createInterface({ input: child.stdout }).on('line', (line) => {
  log += `${line}\n`;
  if (/Access the following URL/.test(line)) expectUrl = true;
  else if (expectUrl && line.startsWith('http')) {
    expectUrl = false;
    // The person: signs in as the manager and allows.
    signIn = (async () => {
      const page = await browser.newPage();
      await page.goto(line.trim());
      await page.fill('#login', 'ada');
      await page.fill('#password', password);
      await page.click('#sign-in');
      await page.click('#allow');
      await page.waitForURL(new RegExp(`^http://127\\.0\\.0\\.1:${port}/callback`));
      await page.close();
    })();
  }
});
const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
const status = await new Promise((resolve) => child.on('exit', resolve));
clearTimeout(timer);
await signIn.catch((error) => console.log(`the browser step failed: ${error.message}`));
await browser.close();
await auth.close();

const checks = readdirSync(out)
  .map((d) => join(out, d, 'checks.json'))
  .filter((f) => existsSync(f))
  .flatMap((f) => JSON.parse(readFileSync(f, 'utf8')));
const failed = checks.filter((c) => c.status !== 'SUCCESS');
const missing = EXPECTED_CHECKS.filter((id) => !checks.some((c) => c.id === id));
console.table(checks.map((c) => ({ check: c.id, status: c.status, error: c.errorMessage ?? '' })));
for (const id of missing) console.log(`FAIL ${id}: the suite did not run it`);
if (failed.length > 0 || missing.length > 0) {
  console.log(
    `authorization-server conformance: ${failed.length + missing.length} failed (suite exit ${status})\n${log.slice(-1500)}`,
  );
  process.exit(1);
}
console.log(`authorization-server conformance: all ${checks.length} checks passed`);
