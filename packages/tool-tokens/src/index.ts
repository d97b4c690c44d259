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

function encoder(): Counter {
  counter ??= (createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: Counter })
    .countTokens;
  return counter;
}

/**
 * The longest run counted whole. BPE merges inside one pre-token (a run of letters, of
 * punctuation, of spaces) and its cost grows with the square of the run: 10,000 letters took
 * 0.06 s, 20,000 took 0.25 s, so one huge word could hold the caller for minutes. A longer run is
 * counted in pieces of this size, a little higher than counted whole: at most two tokens more per
 * piece (14 tokens per 64 letters of a repeated word, against 12.8 counted whole).
 */
export const MAX_RUN = 64;
/** Text is counted in segments of about this many characters, each cut where a pre-token ends. */
const SEGMENT = 4096;

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c >= 128;
/** Where a pre-token surely ends before `c`: a space, or a letter followed by ASCII that is neither a letter nor an apostrophe. */
const boundary = (prev: number, c: number) => isSpace(c) || (isLetter(prev) && !isLetter(c) && c !== 39);

/**
 * Counts `text` segment by segment, each cut where a pre-token ends (exactly the whole text's
 * count), and a run with no such place in MAX_RUN characters in pieces. Linear in the text.
 * Stops once the count passes `stopAbove`; `end` is where the segments that fit end.
 */
function countSegments(text: string, stopAbove: number): { tokens: number; end: number; complete: boolean } {
  const count = encoder();
  let tokens = 0;
  let start = 0;
  let lastBoundary = 0;
  const take = (to: number): boolean => {
    const more = count(text.slice(start, to));
    if (tokens + more > stopAbove) return false;
    tokens += more;
    start = to;
    return true;
  };
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Never between the halves of a surrogate pair.
    if (c >= 0xdc00 && c <= 0xdfff) continue;
    if (boundary(text.charCodeAt(i - 1), c)) {
      lastBoundary = i;
      if (i - start >= SEGMENT && !take(i)) return { tokens, end: start, complete: false };
    } else if (i - Math.max(lastBoundary, start) >= MAX_RUN) {
      // A long run: count what came before it, then the run so far as one piece.
      if (lastBoundary > start && !take(lastBoundary)) return { tokens, end: start, complete: false };
      if (!take(i)) return { tokens, end: start, complete: false };
      lastBoundary = i;
    }
  }
  if (start < text.length && !take(text.length)) return { tokens, end: start, complete: false };
  return { tokens, end: text.length, complete: true };
}

/**
 * Tokens of a text, in time linear in its length: exactly the encoder's count of the whole text,
 * but for runs of more than MAX_RUN characters without a break (counted in pieces, at most two
 * tokens more per piece). The encoder is loaded on first use (about 1 s), then shared.
 */
export function countTokens(text: string): number {
  return countSegments(text, Number.POSITIVE_INFINITY).tokens;
}

/**
 * The longest start of `text` that is at most `maxTokens` tokens (cut where a pre-token ends, or
 * inside a long run), counted once and no further than needed: `end` is where it ends.
 */
export function tokensWithin(text: string, maxTokens: number): { tokens: number; end: number } {
  const { tokens, end } = countSegments(text, maxTokens);
  return { tokens, end };
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
