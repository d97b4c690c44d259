// Comparison 6, the client side: as many GETs as possible for a fixed time, with a fixed number
// of requests in flight, through @agentwire/http-client or a raw undici request (each on its
// own Agent with the same connection limit). Both read and parse the JSON body. `http-client-scrub`
// is the client with a secret to take out of every response (as any client with a key has; the
// plain one here has none), to measure what scrubbing costs. Prints this process's own CPU per
// request beside the rate.
// `http-client-resilient` has the breaker and the bulkhead on (comparison 16).
// Usage: node clients/get-loop.mjs '{"kind":"http-client"|"http-client-scrub"|"http-client-resilient"|"undici","url":...,"seconds":3,"concurrency":32}'
import { HttpClient } from '@agentwire/http-client';
import { Agent, request } from 'undici';

const { kind, url, seconds, concurrency } = JSON.parse(process.argv[2]);
const target = new URL(url);
let get;
let close;
if (kind.startsWith('http-client')) {
  // A secret of the length of a real key, which the body does not hold: every byte is searched.
  const redact = kind === 'http-client-scrub' ? ['s3cr3t-'.repeat(5)] : [];
  // `http-client-resilient`: the breaker and the bulkhead the gateway turns on by default,
  // never triggered here (comparison 16 measures what they cost when nothing is wrong).
  const resilient =
    kind === 'http-client-resilient' ? { breaker: true, concurrency: { maxConcurrent: 128, maxQueue: 512 } } : {};
  const client = new HttpClient({ baseUrl: target.origin, redact, ...resilient });
  get = async () => (await client.get(target.pathname)).data;
  close = () => client.close();
} else {
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 128 });
  get = async () => {
    const { statusCode, body } = await request(url, { dispatcher });
    const data = await body.json();
    if (statusCode !== 200) throw new Error(`HTTP ${statusCode}`);
    return data;
  };
  close = () => dispatcher.close();
}

// Warm up (connections, JIT), then measure.
await Promise.all(Array.from({ length: concurrency }, () => get()));
let done = 0;
let errors = 0;
const cpu = process.cpuUsage();
const started = performance.now();
const until = started + seconds * 1000;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      try {
        await get();
        done++;
      } catch {
        errors++;
      }
    }
  }),
);
const elapsedS = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
await close();
const cpuUs = (used.user + used.system) / done;
process.stdout.write(`${JSON.stringify({ rps: done / elapsedS, done, errors, cpuUs })}\n`);
