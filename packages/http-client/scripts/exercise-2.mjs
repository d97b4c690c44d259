// The lecture's exercise 2, run for real: timeout 2 s, 5 retries, base 0.25 s, against a
// server that always answers 503 (and, for the worst case, one that never answers).
// Usage: pnpm --filter @agentwire/http-client exercise-2   (after pnpm build; takes about 40 s)
import { createServer } from 'node:http';
import { HttpClient, Ledger } from '../dist/index.js';

function serve(handler) {
  return new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

const always503 = await serve((_req, res) => {
  res.writeHead(503, { 'content-type': 'application/json' });
  res.end('{"error":{"type":"api_error","message":"unavailable"}}');
});
const neverAnswers = await serve(() => {});
const url = (server) => `http://127.0.0.1:${server.address().port}`;

async function run(title, server, extra = {}) {
  const ledger = new Ledger();
  const client = new HttpClient({
    baseUrl: url(server),
    timeoutMs: 2000,
    maxRetries: 5,
    backoff: { baseMs: 250, jitter: 0 },
    retryBudget: false,
    ledger,
    ...extra,
  });
  const started = performance.now();
  const error = await client.get('/tool').catch((e) => e);
  const wall = (performance.now() - started) / 1000;
  const waits = ledger.attempts.filter((r) => r.waitReason).map((r) => r.waitMs / 1000);
  const totals = ledger.totals();
  console.log(`\n${title}`);
  console.log(`  attempts:      ${totals.requests} (${totals.retries} retries)`);
  console.log(`  waits (s):     [${waits.join(', ')}] = ${waits.reduce((a, b) => a + b, 0)} s`);
  console.log(`  wall time:     ${wall.toFixed(2)} s`);
  console.log(`  ended with:    ${error.name}: ${error.message}`);
  await client.close();
}

await run('(a, b) always 503, no jitter', always503);
await run('(c) never answers: every attempt times out (the worst case)', neverAnswers);
await run('(c) the same with a 5 s deadline for the call', neverAnswers, { deadline: Date.now() + 5000 });
await run('with the default retry budget (10 tokens, a fresh client)', always503, { retryBudget: undefined });
await run('with the default jitter (up to 25% off each wait)', always503, { backoff: { baseMs: 250 } });

always503.close();
neverAnswers.closeAllConnections();
neverAnswers.close();
