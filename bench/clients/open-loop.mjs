// Comparison 17: latency at a fixed offered rate (open loop). Requests start on a schedule,
// `rate` a second, whether or not earlier ones have answered; each one's latency is measured
// from when it was due, not from when it was sent, so a stalled server is charged for the
// requests queued behind it (no coordinated omission, as wrk2 and Gil Tene's talks explain).
// Closed-loop tools such as autocannon slow down with the server and hide exactly that.
// Usage: node clients/open-loop.mjs '{"mode":"api"|"gateway","url":...,"key"|"token":...,
//   "sessionId":...,"rate":500,"seconds":4,"warmupSeconds":1}'
// Prints {p50, p90, p99, p999, max} in ms, the rate achieved, and errors.
import { Pool } from 'undici';
import { officeDaysRequest } from './office-days.mjs';

const input = JSON.parse(process.argv[2]);
const url = new URL(input.url);
// Enough connections that the client never queues: at 1,000/s and 1 ms a call, a few are busy.
const pool = new Pool(url.origin, { connections: 64, pipelining: 1, keepAliveTimeout: 10_000 });
const options = officeDaysRequest(input, url);
let errors = 0;

async function once(due, samples) {
  try {
    const { statusCode, body } = await pool.request(options);
    const text = await body.text();
    if (statusCode !== 200 || text.includes('"isError":true')) errors++;
  } catch {
    errors++;
  }
  samples?.push(performance.now() - due);
}

/** Starts `rate * seconds` requests on schedule; resolves when every one has answered. */
async function phase(rate, seconds, samples) {
  const interval = 1000 / rate;
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const inFlight = [];
  let sent = 0;
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      // Every request due by now goes now (timers fire late; the schedule does not slip).
      while (sent < total && start + sent * interval <= now) {
        inFlight.push(once(start + sent * interval, samples));
        sent++;
      }
      if (sent >= total) return resolve();
      setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    tick();
  });
  await Promise.all(inFlight);
  return (performance.now() - start) / 1000;
}

await phase(input.rate, input.warmupSeconds ?? 1);
errors = 0;
const samples = [];
const took = await phase(input.rate, input.seconds ?? 4, samples);
await pool.close();
samples.sort((a, b) => a - b);
const at = (q) => samples[Math.min(samples.length - 1, Math.floor(samples.length * q))];
process.stdout.write(
  `${JSON.stringify({
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    p999: at(0.999),
    max: samples.at(-1),
    rate: samples.length / took,
    errors,
  })}\n`,
);
