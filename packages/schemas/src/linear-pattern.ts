// Regular expressions from documents we did not write (an OpenAPI `pattern`, a
// `patternProperties` key) run on RE2JS, a port of RE2: matching takes time linear in the
// input, whatever the pattern. JavaScript's own engine backtracks, so `^(a+)+$` against
// thirty `a`s and a `!` would hold the process for seconds.
//
// RE2 has no lookaround and no backreferences; such a pattern is refused with the reason, and
// the caller leaves it out. Compiling is linear in the size of the compiled program, which
// counted repetition multiplies (`x{1000}` is a thousand copies of x), so a pattern whose
// estimated size is over MAX_PATTERN_COST is refused before it is compiled.
import { createRequire } from 'node:module';
import type { RE2JS as RE2JSClass } from 're2js';

/** Longest pattern taken from a document, in characters. */
export const MAX_PATTERN_LENGTH = 1_000;
/** Largest estimated compiled size: the length times one plus every counted repetition's bound. */
export const MAX_PATTERN_COST = 50_000;

export class PatternError extends Error {
  override readonly name = 'PatternError';
}

export interface LinearPattern {
  /** Whether the pattern matches anywhere in the text, as JSON Schema's `pattern` means. */
  test(text: string): boolean;
}

const require = createRequire(import.meta.url);
let engine: typeof RE2JSClass | undefined;
function re2(): typeof RE2JSClass {
  engine ??= (require('re2js') as { RE2JS: typeof RE2JSClass }).RE2JS;
  return engine;
}

/** An upper bound on the compiled program's size, from the text alone. */
export function patternCost(pattern: string): number {
  let repeats = 0;
  for (const match of pattern.matchAll(/\{(\d+)(?:,(\d*))?\}/g)) repeats += Number(match[2] || match[1]);
  return pattern.length * (1 + repeats);
}

/**
 * Compiles an ECMAScript-dialect pattern for linear-time matching.
 * @throws PatternError naming what is not allowed: too long, too costly, or syntax RE2 lacks
 */
export function compileLinearPattern(pattern: string): LinearPattern {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new PatternError(`it is ${pattern.length} characters long; at most ${MAX_PATTERN_LENGTH} are taken`);
  }
  const cost = patternCost(pattern);
  if (cost > MAX_PATTERN_COST) {
    throw new PatternError(
      `its counted repetitions make it too large to compile (estimated ${cost}, at most ${MAX_PATTERN_COST})`,
    );
  }
  const RE2JS = re2();
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    throw new PatternError(
      `the linear-time engine (RE2) cannot run it: ${(error as Error).message} (RE2 has no lookaround and no backreferences)`,
    );
  }
}

/** Why a pattern cannot run in linear time, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  try {
    compileLinearPattern(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}

/** The engine for Ajv's `code.regExp` option: every `pattern` it compiles runs on RE2. */
export const linearRegExp = Object.assign((pattern: string) => compileLinearPattern(pattern), {
  code: 'linearRegExp',
});
