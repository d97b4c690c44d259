// Comparison 16, the client side: calls to a toy API made sick by its fault rules, through
// @agentwire/http-client with or without hedging or a breaker; prints each call's latency
// percentiles, how many requests reached the upstream, and what the breaker did.
// Usage: node clients/sick.mjs '{"url":...,"key":...,"mode":"plain"|"hedge"|"breaker","calls":400,"concurrency":4}'
import { HttpClient, Ledger } from '@agentwire/http-client';

const { url, key, mode, calls, concurrency, breakMs = 1000, pauseMs = 0 } = JSON.parse(process.argv[2]);
const ledger = new Ledger();
const client = new HttpClient({
  baseUrl: url,
  auth: { key },
  ledger,
  maxRetries: 0,
  retryBudget: mode === 'hedge' ? {} : false,
  ...(mode === 'hedge' ? { hedge: { percentile: 95 } } : {}),
  // Polly's thresholds, with a short break so that a run of seconds sees several half-opens.
  ...(mode === 'breaker' ? { breaker: { breakDurationMs: breakMs } } : {}),
});
const latencies = [];
const refused = [];
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < calls) {
      const n = next++;
      const started = performance.now();
      try {
        await client.get(`/employees/e-0${(n % 9) + 1}`);
        latencies.push(performance.now() - started);
      } catch (error) {
        const ms = performance.now() - started;
        if (error.type === 'circuit_open') refused.push(ms);
        else latencies.push(ms);
      }
      // A steady rate rather than a tight loop: refused calls take microseconds.
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }),
);
await client.close();
const pct = (list, p) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
// Upstream requests sent while the breaker was open or half-open, per half-open interval.
const events = ledger.entries.filter((e) => e.kind === 'event' && e.event === 'circuit_state');
const opened = events.filter((e) => e.detail.endsWith('-> open')).map((e) => Date.parse(e.time));
const probesPerInterval = opened.map((at) => {
  const closeOrNext = Math.min(
    ...events.map((e) => Date.parse(e.time)).filter((t) => t > at),
    Number.POSITIVE_INFINITY,
  );
  // Attempts that began after it opened (those in flight then were let through while closed).
  return ledger.attempts.filter((a) => Date.parse(a.time) > at && Date.parse(a.time) < closeOrNext).length;
});
const { hedgesSent, hedgesWon } = client.resilience();
process.stdout.write(
  `${JSON.stringify({
    calls,
    upstream: ledger.attempts.length,
    hedgesSent,
    hedgesWon,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    refused: refused.length,
    refusedP50: pct(refused, 50),
    opens: opened.length,
    maxProbesPerInterval: probesPerInterval.length ? Math.max(...probesPerInterval) : 0,
  })}\n`,
);
