// The load generator, in its own process: autocannon with the options given as JSON on the
// command line; prints one JSON line with throughput, latency and error counts.
import autocannon from 'autocannon';

const { rejectIsError, ...options } = JSON.parse(process.argv[2]);
// A tool call that fails still answers HTTP 200: count such answers as mismatches.
const verifyBody = rejectIsError ? (body) => !body.includes('"isError":true') : undefined;
// Timed here: autocannon's own duration is in whole seconds, too coarse for a fixed `amount`.
const started = performance.now();
const result = await autocannon({ ...options, verifyBody, renderProgressBar: false, renderResultsTable: false });
const durationS = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.total / durationS,
    total: result.requests.total,
    durationS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
  })}\n`,
);
