// A Stoplight Prism mock made from an OpenAPI document, in its own process: it validates every
// request against the document and answers from its examples and schemas.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const PRISM = fileURLToPath(new URL('./prism-mock.mjs', import.meta.url));

export async function startPrism(file: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [PRISM, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`Prism exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill();
        await once(child, 'exit');
      }
    },
  };
}
