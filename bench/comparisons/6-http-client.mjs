// 6. @agentwire/http-client GET against a raw undici request, on the bare route (so the client
// is what is measured). Both parse the JSON body. Also each side's own CPU per GET, and what the
// client's scrubbing of secrets from responses costs (a client with a key always scrubs).
import { fmt, median, round, rpsOf } from '../lib/runner.mjs';
import { bareEmails } from '../lib/shared-servers.mjs';

export const ids = [6];

export async function run(runner) {
  const bare = await bareEmails(runner);
  const { connections, seconds } = runner.settings;
  console.log('6. http-client GET vs raw undici request');
  const loop = (kind) => () =>
    runner.runJson('clients/get-loop.mjs', { kind, url: `${bare.line}/emails`, seconds, concurrency: connections });
  const s = await runner.interleave({
    client: loop('http-client'),
    undici: loop('undici'),
    scrubbing: loop('http-client-scrub'),
  });
  const cpu = (side) => median(s[side].map((x) => x.cpuUs));
  const ratio = rpsOf(s.client) / rpsOf(s.undici);
  runner.row({
    id: 6,
    comparison: '`@agentwire/http-client` GET vs raw undici `request` (both parse JSON)',
    ours: `${fmt(rpsOf(s.client))} req/s`,
    baseline: `${fmt(rpsOf(s.undici))} req/s`,
    measure: `${round(ratio)}x`,
    goal: '>= 0.85x',
    met: ratio >= 0.85,
  });
  runner.row({
    id: 6,
    comparison: '`@agentwire/http-client` GET vs raw undici `request`: own CPU per GET (client process)',
    ours: `${fmt(cpu('client'))} µs`,
    baseline: `${fmt(cpu('undici'))} µs`,
    measure: `${round(cpu('client') / cpu('undici'))}x`,
    goal: 'cost',
    met: null,
  });
  runner.row({
    id: 6,
    comparison: 'http-client scrubbing a secret from every response (a 20-email body) vs none: own CPU per GET',
    ours: `${fmt(cpu('scrubbing'))} µs`,
    baseline: `${fmt(cpu('client'))} µs`,
    measure: `${round(cpu('scrubbing') / cpu('client'))}x`,
    goal: 'cost',
    met: null,
  });
}
