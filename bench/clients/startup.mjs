// Comparison 8: spawn the gateway over stdio and time until its answer to initialize arrives;
// also times `node -e 0` on the same machine at the same moment, as the floor.
// Usage: node clients/startup.mjs '{"bin":...,"env":{...}}'
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';

const { bin, env } = JSON.parse(process.argv[2]);
let t0 = performance.now();
spawnSync(process.execPath, ['-e', '0']);
const nodeMs = performance.now() - t0;

t0 = performance.now();
const child = spawn(process.execPath, [bin, '--stdio'], {
  env: { PATH: process.env.PATH, ...env },
  stdio: ['pipe', 'pipe', 'ignore'],
});
child.stdin.write(
  `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`,
);
const line = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
const ms = performance.now() - t0;
child.kill();
if (!JSON.parse(line).result?.protocolVersion) throw new Error(`initialize failed: ${line}`);
process.stdout.write(`${JSON.stringify({ ms, nodeMs })}\n`);
