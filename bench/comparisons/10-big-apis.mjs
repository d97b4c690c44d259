// 10. The gateway on an API too big to list: GitHub's REST description (@octokit/openapi, 1,223
// operations, about 2.2 million tokens as a static list). Start-up over stdio until initialize is
// answered, in auto mode (which serves it dynamically) and in static mode, with `node -e 0` as the
// floor; and the median latency of a search over the operations, in process and as a tools/call.
import { fileURLToPath } from 'node:url';
import { GATEWAY_BIN } from '@agentwire/mcp-gateway';
import { median } from '../lib/runner.mjs';

export const ids = [10];

const GITHUB = fileURLToPath(
  new URL('../../apps/mcp-gateway/node_modules/@octokit/openapi/generated/api.github.com.json', import.meta.url),
);

export async function run(runner) {
  console.log("10. GitHub's spec: start-up and search");
  const startup = (mode) => () =>
    runner.runJson('clients/startup.mjs', {
      bin: GATEWAY_BIN,
      env: { UPSTREAM_URL: 'http://127.0.0.1:9', OPENAPI_URL: GITHUB, TOOLS_MODE: mode },
    });
  const s = await runner.interleave({ auto: startup('auto'), static: startup('static') });
  for (let i = runner.settings.rounds; i < runner.settings.startupRuns; i++) {
    s.auto.push(await startup('auto')());
    s.static.push(await startup('static')());
  }
  const node = median(s.auto.map((x) => x.nodeMs));
  const auto = median(s.auto.map((x) => x.ms));
  const fixed = median(s.static.map((x) => x.ms));
  runner.row({
    id: 10,
    comparison: "start-up: stdio initialize answered, GitHub's spec (1,223 operations), auto mode (dynamic)",
    ours: `${Math.round(auto)} ms`,
    baseline: `${Math.round(fixed)} ms in static mode; ${Math.round(node)} ms for \`node -e 0\``,
    measure: `${Math.round(auto)} ms`,
    goal: '<= 1000 ms',
    met: auto <= 1000,
  });
  const calls = runner.quick ? 300 : 1000;
  const searches = await runner.interleave({
    search: () => runner.runJson('clients/search.mjs', { spec: GITHUB, bin: GATEWAY_BIN, calls }),
  });
  const inProcess = median(searches.search.map((x) => x.inProcessMs));
  const overStdio = median(searches.search.map((x) => x.overStdioMs));
  runner.row({
    id: 10,
    comparison: "search_operations over GitHub's 1,223 operations: median latency",
    ours: `${inProcess.toFixed(2)} ms (the search)`,
    baseline: `${overStdio.toFixed(2)} ms as a tools/call over stdio`,
    measure: `${inProcess.toFixed(2)} ms`,
    goal: '< 2 ms',
    met: inProcess < 2,
  });
}
