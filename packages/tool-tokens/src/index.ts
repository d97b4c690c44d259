// What a list of tools costs a model: tokens counted with a real tokenizer (OpenAI's
// o200k_base, through js-tiktoken), not estimated from bytes. The gateway counts what it
// serves with it, and `agent tools` what it is served, so the two figures agree.
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

/** The fields of a tool that this package reads. */
export interface ToolView {
  name: string;
  description?: string | undefined;
}

export const TOKENIZER = 'o200k_base';

let encoder: Tiktoken | undefined;

/** Tokens of a text. The encoder is built on first use (about 0.3 s), then shared. */
export function countTokens(text: string): number {
  encoder ??= new Tiktoken(o200k);
  return encoder.encode(text).length;
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
