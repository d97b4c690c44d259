// 8. Start-up over stdio: from spawn to initialize answered, with the toy API's spec (fetched)
// and with a generated spec of 500 operations; `node -e 0` is the floor.
import { writeFileSync } from 'node:fs';
import { GATEWAY_BIN } from '@agentwire/mcp-gateway';
import { median } from '../lib/runner.mjs';

export const ids = [8];

function bigSpec(operations) {
  const big = { openapi: '3.1.0', info: { title: 'Big', version: '1' }, paths: {} };
  for (let i = 0; i < operations; i++) {
    big.paths[`/things${i}/{id}`] = {
      get: {
        operationId: `get_thing_${i}`,
        description: `Thing number ${i}.`,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          200: {
            description: 'ok',
            content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } },
          },
        },
      },
    };
  }
  return big;
}

export async function run(runner) {
  console.log('8. start-up over stdio');
  const bigFile = runner.tmpFile('500-ops');
  writeFileSync(bigFile, JSON.stringify(bigSpec(500)));
  const startup = (openapi) => () =>
    runner.runJson('clients/startup.mjs', {
      bin: GATEWAY_BIN,
      env: {
        UPSTREAM_URL: runner.api.line,
        UPSTREAM_API_KEY: runner.key,
        ...(openapi ? { OPENAPI_URL: openapi } : {}),
      },
    });
  const s = await runner.interleave({ toy: startup(undefined), big: startup(bigFile) });
  // More runs than rounds: start-up is short and its spread is wide.
  for (let i = runner.settings.rounds; i < runner.settings.startupRuns; i++) {
    s.toy.push(await startup(undefined)());
    s.big.push(await startup(bigFile)());
  }
  const node = median(s.toy.map((x) => x.nodeMs));
  const toy = median(s.toy.map((x) => x.ms));
  const big = median(s.big.map((x) => x.ms));
  for (const [comparison, ms, goal] of [
    ["start-up: stdio initialize answered, toy API's spec (fetched)", toy, 300],
    ['start-up: stdio initialize answered, generated spec of 500 operations', big, 1000],
  ]) {
    runner.row({
      id: 8,
      comparison,
      ours: `${Math.round(ms)} ms`,
      baseline: `${Math.round(node)} ms for \`node -e 0\``,
      measure: `${Math.round(ms)} ms`,
      goal: `<= ${goal} ms`,
      met: ms <= goal,
    });
  }
}
