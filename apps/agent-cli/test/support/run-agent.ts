// Runs the built `agent` command as a real process and collects what it printed.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const AGENT_BIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** Runs `agent ARGS` with only PATH and `env` in its environment; `input` goes to its stdin. */
export async function runAgent(args: string[], env: Record<string, string> = {}, input?: string | Buffer) {
  const child = spawn(process.execPath, [AGENT_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin?.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const [code] = await once(child, 'close');
  return { code: code as number, stdout, stderr };
}
