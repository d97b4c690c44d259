// Comparison 10: search latency in dynamic mode over GitHub's 1,223 operations, twice: the
// search itself (in this process), and search_operations as a tools/call over stdio (a real
// gateway process, answer parsed). Each query set is run once to warm up, then timed.
// Usage: node clients/search.mjs '{"spec":...,"bin":...,"calls":N}'
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createGateway } from '@agentwire/mcp-gateway';

const { spec, bin, calls } = JSON.parse(process.argv[2]);
const QUERIES = [
  'create an issue',
  'list pull requests',
  'star a repository',
  'get the authenticated user',
  'delete a branch protection',
  'add a label to an issue',
  'search code',
  'list workflow runs',
  'create a release',
  'get a gist',
];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const gateway = await createGateway({ upstreamUrl: 'http://127.0.0.1:9', openapi: spec, toolsMode: 'dynamic' });
for (const q of QUERIES) gateway.tools.index.search(q);
const inProcess = [];
for (let i = 0; i < calls; i++) {
  const t0 = performance.now();
  const hits = gateway.tools.index.search(QUERIES[i % QUERIES.length]);
  inProcess.push(performance.now() - t0);
  if (hits.length === 0) throw new Error(`no hit for ${QUERIES[i % QUERIES.length]}`);
}
await gateway.close();

const child = spawn(process.execPath, [bin, '--stdio'], {
  env: { PATH: process.env.PATH, UPSTREAM_URL: 'http://127.0.0.1:9', OPENAPI_URL: spec, TOOLS_MODE: 'dynamic' },
  stdio: ['pipe', 'pipe', 'ignore'],
});
const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
const ask = async (message) => {
  child.stdin.write(`${JSON.stringify(message)}\n`);
  return JSON.parse((await lines.next()).value);
};
await ask({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
});
child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
const search = (id, query) =>
  ask({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'search_operations', arguments: { query } } });
for (const [i, q] of QUERIES.entries()) await search(i + 1, q);
const overStdio = [];
for (let i = 0; i < calls; i++) {
  const t0 = performance.now();
  const answer = await search(100 + i, QUERIES[i % QUERIES.length]);
  overStdio.push(performance.now() - t0);
  if (!answer.result?.structuredContent?.results?.length) throw new Error(`bad answer: ${JSON.stringify(answer)}`);
}
child.kill();
process.stdout.write(`${JSON.stringify({ inProcessMs: median(inProcess), overStdioMs: median(overStdio) })}\n`);
