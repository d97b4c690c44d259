// Comparison 5: latency at concurrency 1. One request at a time over one kept-alive
// connection, either straight to the API route or as a tools/call through the gateway (with an
// established session). Prints the median and p90 in milliseconds.
// Usage: node clients/latency.mjs '{"mode":"api"|"gateway","url":...,"key"|"token":...,"sessionId":...,"calls":2000}'
import { Client } from 'undici';
import { officeDaysRequest } from './office-days.mjs';

const input = JSON.parse(process.argv[2]);
const url = new URL(input.url);
const client = new Client(url.origin, { pipelining: 1, keepAliveTimeout: 10_000 });
const options = officeDaysRequest(input, url);
async function once() {
  const { statusCode, body } = await client.request(options);
  const text = await body.text();
  if (statusCode !== 200 || text.includes('"isError":true'))
    throw new Error(`bad answer ${statusCode}: ${text.slice(0, 200)}`);
}
for (let i = 0; i < Math.min(200, input.calls); i++) await once();
const samples = [];
for (let i = 0; i < input.calls; i++) {
  const t0 = performance.now();
  await once();
  samples.push(performance.now() - t0);
}
await client.close();
samples.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({ p50: samples[Math.floor(samples.length / 2)], p90: samples[Math.floor(samples.length * 0.9)] })}\n`,
);
