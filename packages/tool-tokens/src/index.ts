// What a list of tools costs a model: tokens counted with a real tokenizer (OpenAI's
// o200k_base, through gpt-tokenizer), not estimated from bytes. The gateway counts what it
// serves with it, and `agent tools` what it is served, so the two figures agree.
//
// gpt-tokenizer rather than js-tiktoken: the same counts (checked on 1 MB of GitHub's spec:
// 223,053 tokens from both), but ready in about a third of the time (its encoder is built at
// import, about 1 s here, against about 3 s for js-tiktoken's), and it counts about twice as fast.
// The encoder is imported on first use, so a gateway that never counts never pays for it.

import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The fields of a tool that this package reads. */
export interface ToolView {
  name: string;
  description?: string | undefined;
}

export const TOKENIZER = 'o200k_base';

type Counter = (text: string) => number;
let counter: Counter | undefined;

/** Tokens of a text. The encoder is loaded on first use (about 1 s), then shared. */
export function countTokens(text: string): number {
  counter ??= (createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: Counter })
    .countTokens;
  return counter(text);
}

/**
 * Tokens of a tools/list answer holding these tools, counted tool by tool (a list costs its
 * tools plus a few tokens of wrapping). With `stopAbove`, counting stops as soon as the total
 * passes it, so finding out that a list of a thousand tools is too big costs only what it
 * takes to pass the budget; `complete` then says the figure is a lower bound.
 */
export function listTokens(tools: readonly object[], stopAbove = Number.POSITIVE_INFINITY) {
  let total = countTokens('{"tools":[]}');
  let counted = 0;
  for (const tool of tools) {
    total += countTokens(JSON.stringify(tool)) + (counted > 0 ? 1 : 0);
    counted++;
    if (total > stopAbove) break;
  }
  return { tokens: total, counted, complete: counted === tools.length };
}

/**
 * The same count in a short-lived child process: loading the encoder (about 1 s, and some
 * 75 MB) and counting a list of a thousand tools (seconds) then cost the caller neither its
 * event loop, nor its start-up, nor memory it keeps (a worker thread left the caller's RSS
 * about 30 MB higher after it ended; a process gives it all back when it exits).
 */
export function listTokensApart(
  tools: readonly object[],
  stopAbove?: number,
): Promise<{ tokens: number; counted: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./count-process.js', import.meta.url)), [], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    let answered = false;
    child.once('message', (result) => {
      answered = true;
      resolve(result as { tokens: number; counted: number; complete: boolean });
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!answered) reject(new Error(`the token-counting process stopped with exit code ${code}`));
    });
    child.send({ tools, stopAbove });
  });
}

/** The full list against what a model needs to choose: names and descriptions alone. */
export function tokenReport(tools: ToolView[]) {
  const full = countTokens(JSON.stringify({ tools }));
  const brief = countTokens(tools.map((t) => `${t.name}: ${t.description ?? ''}`).join('\n'));
  return {
    tools: tools.length,
    fullListTokens: full,
    namesAndDescriptionsTokens: brief,
    ratio: brief === 0 ? 0 : Number((full / brief).toFixed(1)),
  };
}
