// One build's http-client in a process of its own, for bench/own-cpu-ab.mjs: GETs of a fixed
// document, 16 in flight, a round for each line read from stdin, and this process's CPU per GET
// (µs) printed for each. Two builds loaded in one process would share Node's own stream and
// socket code and what its compiler learned from both; apart, each build's client runs alone,
// as the gateways and the toy APIs of the other rows do.
// Usage: node bench/servers/client-rounds.mjs REPO_DIR URL   (prints "ready", then a number a round)
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [repo, url] = process.argv.slice(2);
if (!repo || !url) throw new Error('usage: node bench/servers/client-rounds.mjs REPO_DIR URL');
const { HttpClient } = await import(pathToFileURL(join(repo, 'packages/http-client/dist/index.js')).href);

async function round(calls) {
  const client = new HttpClient({ baseUrl: url });
  await Promise.all(Array.from({ length: 16 }, () => client.get('/emails')));
  const before = process.cpuUsage();
  let left = calls;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) await client.get('/emails');
    }),
  );
  const used = process.cpuUsage(before);
  await client.close();
  return (used.user + used.system) / calls;
}

console.log('ready');
for await (const line of createInterface({ input: process.stdin })) {
  const calls = Number(line);
  if (!Number.isInteger(calls) || calls < 1) throw new Error(`a round is a whole number of calls; got "${line}"`);
  console.log(await round(calls));
}
