// 6. @agentwire/http-client GET against a raw undici request, on the bare route (so the client
// is what is measured). Both parse the JSON body.
import { fmt, round, rpsOf } from '../lib/runner.mjs';
import { bareEmails } from '../lib/shared-servers.mjs';

export const ids = [6];

export async function run(runner) {
  const bare = await bareEmails(runner);
  const { connections, seconds } = runner.settings;
  console.log('6. http-client GET vs raw undici request');
  const loop = (kind) => () =>
    runner.runJson('clients/get-loop.mjs', { kind, url: `${bare.line}/emails`, seconds, concurrency: connections });
  const s = await runner.interleave({ client: loop('http-client'), undici: loop('undici') });
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
}
