// `agent check EXERCISE [answers]`: the learner's own answer to one of the lecture's exercises,
// checked against what our code computes (the retry policy of packages/http-client, not a copy of
// it), right or wrong, and why. With no answers it prints the question. Exit 0 when every answer
// given is right, 1 when one is wrong, 2 for a malformed answer.
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF } from '@agentwire/http-client';
import { EXIT } from '../exit-codes.js';
import { print } from '../print.js';
import { wrapText } from '../text-table.js';
import { tokenReport } from '../tool-rendering.js';
import { UsageError } from '../usage-error.js';
import { stackOf, withMcp } from './command-args.js';
import { contextArithmetic, toolsNamed } from './tools.js';

const CHECK_USAGE = `usage: agent check ex2 [--variant N] [--attempts N] [--waits S,S,...] [--total-wait S] [--worst S] [--step S]
       agent check ex3 [--safe a,b,...]
       agent check ex8 [--full N] [--names N] [--per-step N] [--task N]   (tokens, measured on our tools)
       agent check backoff FILE.mjs     (your own backoffDelay, checked against the client's)`;

/** The most variants of exercise 2; the number only picks settings, so any in range works. */
export const MAX_VARIANT = 999;

export interface Ex2Settings {
  timeoutS: number;
  maxRetries: number;
  baseDelayS: number;
  /** Calls of this kind in one step of the agent. */
  callsPerStep: number;
}

/** The lecture's own settings (variant 0). */
export const LECTURE_EX2: Ex2Settings = { timeoutS: 2, maxRetries: 5, baseDelayS: 0.25, callsPerStep: 3 };

/** Other settings for the same question, picked by the variant number (the same number, the same settings). */
export function ex2Variant(n: number): Ex2Settings {
  if (n === 0) return LECTURE_EX2;
  // A small linear congruential step per choice: deterministic, and spread over the options.
  let state = n * 2654435761;
  const pick = <T>(options: readonly T[]): T => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    // The high bits: an LCG's low bits repeat with a short period.
    return options[Math.floor(state / 65536) % options.length] as T;
  };
  return {
    timeoutS: pick([1, 2, 3, 5] as const),
    maxRetries: pick([2, 3, 4, 5, 6] as const),
    baseDelayS: pick([0.1, 0.2, 0.25, 0.5, 1] as const),
    callsPerStep: pick([2, 3, 4] as const),
  };
}

export interface Ex2Answer {
  attempts: number;
  waits: number[];
  totalWait: number;
  worst: number;
  step: number;
}

const round = (n: number) => Number(n.toFixed(3));

/** What the client does with these settings: its own backoff with jitter off (as `agent get --no-jitter`). */
export function solveEx2(s: Ex2Settings): Ex2Answer {
  const options: BackoffOptions = { ...DEFAULT_BACKOFF, baseMs: Math.round(s.baseDelayS * 1000), jitter: 0 };
  const waits = Array.from({ length: s.maxRetries }, (_, k) => backoffDelay(k, options, () => 0) / 1000);
  const totalWait = round(waits.reduce((sum, w) => sum + w, 0));
  const attempts = s.maxRetries + 1;
  const worst = round(attempts * s.timeoutS + totalWait);
  return { attempts, waits, totalWait, worst, step: round(worst * s.callsPerStep) };
}

export interface Verdict {
  label: string;
  right: boolean;
  said: string;
  why: string;
}

const near = (a: number, b: number) => Math.abs(a - b) <= 0.01 + Math.abs(b) * 0.005;

/** Each answer given, right or wrong, with the reason (the reason is shown either way). */
export function judgeEx2(s: Ex2Settings, given: Partial<Ex2Answer>): Verdict[] {
  const truth = solveEx2(s);
  const capS = DEFAULT_BACKOFF.capMs / 1000;
  const capped = s.baseDelayS * 2 ** (s.maxRetries - 1) > capS;
  const out: Verdict[] = [];
  if (given.attempts !== undefined)
    out.push({
      label: '(a) attempts',
      right: given.attempts === truth.attempts,
      said: String(given.attempts),
      why: `${truth.attempts}: the first attempt and ${s.maxRetries} retries`,
    });
  if (given.waits !== undefined)
    out.push({
      label: '(b) waits',
      right: given.waits.length === truth.waits.length && given.waits.every((w, i) => near(w, truth.waits[i] ?? NaN)),
      said: `[${given.waits.join(', ')}]`,
      why: `[${truth.waits.join(', ')}]: base ${s.baseDelayS} s x 2^k for k = 0..${s.maxRetries - 1}${capped ? `, none longer than the client's cap of ${capS} s (capMs)` : ''}`,
    });
  if (given.totalWait !== undefined)
    out.push({
      label: '(b) total wait',
      right: near(given.totalWait, truth.totalWait),
      said: `${given.totalWait} s`,
      why: `${truth.totalWait} s: the sum of the waits`,
    });
  if (given.worst !== undefined)
    out.push({
      label: '(c) worst case',
      right: near(given.worst, truth.worst),
      said: `${given.worst} s`,
      why: `${truth.worst} s: ${truth.attempts} attempts x ${s.timeoutS} s timeout + ${truth.totalWait} s of waits`,
    });
  if (given.step !== undefined)
    out.push({
      label: '(d) one step',
      right: near(given.step, truth.step),
      said: `${given.step} s`,
      why: `${truth.step} s: ${s.callsPerStep} such calls one after another`,
    });
  return out;
}

export function ex2Question(n: number, s: Ex2Settings): string {
  const flaky = `pnpm agent get '/flaky?fail_times=9&run=v${n}' --max-retries ${s.maxRetries} --base-delay ${s.baseDelayS} --no-jitter --no-retry-budget`;
  return [
    `Exercise 2${n === 0 ? " (the lecture's settings)" : `, variant ${n}`}: timeout=${s.timeoutS} s, max_retries=${s.maxRetries}, base_delay=${s.baseDelayS} s; the server keeps answering 503.`,
    '(a) How many attempts in all? (b) Which waits before the retries, and how long in all?',
    `(c) The worst case for one call, if every attempt times out? (d) One step of the agent makes ${s.callsPerStep} such calls: the worst case for the step?`,
    `Answer with: pnpm agent check ex2${n === 0 ? '' : ` --variant ${n}`} --attempts N --waits S,S,... --total-wait S --worst S --step S`,
    `See (a) and (b) happen: ${flaky}`,
  ].join('\n');
}

/** Exercise 3: which retries are safe without anything more. */
export const EX3_ITEMS: Record<string, { request: string; safe: boolean; why: string }> = {
  a: { request: 'GET /emails?urgent=true', safe: true, why: 'a read: nothing changes however often it runs' },
  b: {
    request: 'POST /digest (computes, stores nothing)',
    safe: true,
    why: 'no side effect: a repeat only costs the work again',
  },
  c: {
    request: 'POST /emails/em-003/reply (sends a reply)',
    safe: false,
    why: 'a repeat can send a second reply; send an Idempotency-Key (the server keeps the first answer) or let the model decide',
  },
  d: {
    request: 'DELETE /sessions/sess-0001',
    safe: true,
    why: 'idempotent in its effect: the second DELETE finds it gone (404), the state is the same',
  },
};

export function judgeEx3(safe: string[]): Verdict[] {
  const chosen = new Set(safe);
  return Object.entries(EX3_ITEMS).map(([letter, item]) => ({
    label: `(${letter}) ${item.request}`,
    right: chosen.has(letter) === item.safe,
    said: chosen.has(letter) ? 'safe' : 'not safe',
    why: `${item.safe ? 'safe' : 'not safe'}: ${item.why}`,
  }));
}

/** The cases a learner's backoffDelay must agree with the client's on. */
export const BACKOFF_CASES: Array<{ retry: number; options: BackoffOptions; random: number }> = [
  ...[0, 1, 2, 3, 4].map((retry) => ({ retry, options: { baseMs: 250, capMs: 8000, jitter: 0 }, random: 0 })),
  ...[5, 6, 7].map((retry) => ({ retry, options: { baseMs: 500, capMs: 8000, jitter: 0 }, random: 0 })),
  ...[0, 0.5, 1].map((random) => ({ retry: 2, options: { baseMs: 500, capMs: 8000, jitter: 0.25 }, random })),
  { retry: 10, options: { baseMs: 100, capMs: 2000, jitter: 0.5 }, random: 0.5 },
];

/** The three tools exercise 8 counts (the lecture used its own three). */
export const EX8_TOOLS = ['office_days', 'get_email', 'read_document'];

async function listThree(stack: Awaited<ReturnType<typeof stackOf>>) {
  const tools = await withMcp(stack, 'mcp-stdio', false, (b) => b.listTools());
  return toolsNamed(
    tools,
    EX8_TOOLS,
    ([name]) => new Error(`the gateway serves no tool '${name}': exercise 8 needs the toy API's tools`),
  );
}

type BackoffFn = (retry: number, options: BackoffOptions, random: () => number) => unknown;

export async function judgeBackoff(file: string): Promise<Verdict[]> {
  if (!['.mjs', '.js'].includes(extname(file))) {
    throw new UsageError(
      `agent check backoff takes a JavaScript module (.mjs or .js), got '${file}'; copy examples/lecture/backoff.mjs`,
    );
  }
  let mod: { backoffDelay?: unknown };
  try {
    mod = (await import(pathToFileURL(resolve(file)).href)) as { backoffDelay?: unknown };
  } catch (error) {
    throw new UsageError(`cannot load ${file}: ${(error as Error).message}`);
  }
  if (typeof mod.backoffDelay !== 'function') {
    throw new UsageError(`${file} must export a function backoffDelay(retry, { baseMs, capMs, jitter }, random)`);
  }
  const yours = mod.backoffDelay as BackoffFn;
  return BACKOFF_CASES.map(({ retry, options, random }) => {
    const expected = backoffDelay(retry, options, () => random);
    let said: string;
    let right = false;
    try {
      const got = yours(retry, { ...options }, () => random);
      said = typeof got === 'number' ? `${got} ms` : `${JSON.stringify(got)} (not a number)`;
      right = typeof got === 'number' && Math.abs(got - expected) <= 1;
    } catch (error) {
      said = `threw ${(error as Error).message}`;
    }
    const full = options.baseMs * 2 ** retry;
    const steps = [
      `${options.baseMs} x 2^${retry} = ${full}`,
      ...(full > options.capMs ? [`capped at ${options.capMs}`] : []),
      ...(options.jitter > 0 ? [`less ${options.jitter} x ${random} of it`] : []),
    ];
    return {
      label: `retry ${retry}, base ${options.baseMs}, cap ${options.capMs}, jitter ${options.jitter}, random ${random}`,
      right,
      said,
      why: `${expected} ms: ${steps.join(', ')}`,
    };
  });
}

/** Prose lines wrapped to the terminal's 80 columns (a command line is left whole, to copy). */
const wrapped = (text: string) =>
  text
    .split('\n')
    .flatMap((line) => (line.includes('pnpm agent') ? [line] : wrapText(line, 80)))
    .join('\n');

function printVerdicts(verdicts: Verdict[]): number {
  for (const v of verdicts) {
    print(`${v.right ? 'right' : 'WRONG'}  ${v.label}: you said ${v.said}\n`);
    if (!v.right) print(`       the answer is ${v.why}\n`);
  }
  const wrong = verdicts.filter((v) => !v.right).length;
  print(wrong === 0 ? `all ${verdicts.length} right\n` : `${wrong} of ${verdicts.length} wrong\n`);
  return wrong === 0 ? EXIT.ok : EXIT.taskFailed;
}

function numberOf(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text.replace(/s$/, ''));
  if (text.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`--${flag} must be a number of seconds (or a count) of 0 or more, got '${text}'`);
  return n;
}

function listOf(flag: string, text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const parts = text.replace(/^\[|\]$/g, '').split(',');
  return parts.map((part) => numberOf(flag, part.trim()) as number);
}

export async function checkCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      variant: { type: 'string' },
      attempts: { type: 'string' },
      waits: { type: 'string' },
      'total-wait': { type: 'string' },
      worst: { type: 'string' },
      step: { type: 'string' },
      safe: { type: 'string' },
      full: { type: 'string' },
      names: { type: 'string' },
      'per-step': { type: 'string' },
      task: { type: 'string' },
    },
  });
  const [exercise, file, ...extra] = positionals;
  if (extra.length > 0 || (file !== undefined && exercise !== 'backoff')) throw new UsageError(CHECK_USAGE);
  if (exercise === 'ex2') {
    const variant = values.variant === undefined ? 0 : Number(values.variant);
    if (!Number.isInteger(variant) || variant < 0 || variant > MAX_VARIANT)
      throw new UsageError(`--variant must be a whole number from 0 to ${MAX_VARIANT}, got '${values.variant}'`);
    const settings = ex2Variant(variant);
    const given: Partial<Ex2Answer> = {};
    const attempts = numberOf('attempts', values.attempts);
    const waits = listOf('waits', values.waits);
    const totalWait = numberOf('total-wait', values['total-wait']);
    const worst = numberOf('worst', values.worst);
    const step = numberOf('step', values.step);
    if (attempts !== undefined) given.attempts = attempts;
    if (waits !== undefined) given.waits = waits;
    if (totalWait !== undefined) given.totalWait = totalWait;
    if (worst !== undefined) given.worst = worst;
    if (step !== undefined) given.step = step;
    print(`${wrapped(ex2Question(variant, settings))}\n`);
    if (Object.keys(given).length === 0) return EXIT.ok;
    print('\n');
    return printVerdicts(judgeEx2(settings, given));
  }
  if (exercise === 'ex3') {
    print(
      `Exercise 3: which of these is safe to retry as it is?\n${Object.entries(EX3_ITEMS)
        .map(([letter, item]) => `  (${letter}) ${item.request}`)
        .join('\n')}\nAnswer with: pnpm agent check ex3 --safe a,b,...\n`,
    );
    if (values.safe === undefined) return EXIT.ok;
    const letters = values.safe
      .split(',')
      .map((l) => l.trim().toLowerCase())
      .filter(Boolean);
    const unknown = letters.filter((l) => !(l in EX3_ITEMS));
    if (unknown.length > 0) throw new UsageError(`--safe takes the letters a, b, c, d, got '${unknown.join(', ')}'`);
    print('\n');
    return printVerdicts(judgeEx3(letters));
  }
  if (exercise === 'ex8') {
    print(
      wrapped(
        `Exercise 8, with three of our tools (${EX8_TOOLS.join(', ')}), counted in o200k_base tokens: (a) the full tools/list JSON of the three? (b) names and descriptions only? (c) 5 servers with 40 tools of this average size: tokens per step? And in a 20-step task? An answer within 2% is right: tokenizers differ a little.\nAnswer with: pnpm agent check ex8 --full N --names N --per-step N --task N`,
      ),
    );
    print('\n');
    const answers: Array<[string, string | undefined]> = [
      ['full', values.full],
      ['names', values.names],
      ['per-step', values['per-step']],
      ['task', values.task],
    ];
    if (answers.every(([, v]) => v === undefined)) return EXIT.ok;
    const given = Object.fromEntries(answers.map(([flag, v]) => [flag, numberOf(flag, v)]));
    // Measured now, through the gateway, as `agent tools --only` does.
    const stack = await stackOf({}, 'mcp-stdio');
    let tools: Awaited<ReturnType<typeof listThree>>;
    try {
      tools = await listThree(stack);
    } finally {
      await stack.close();
    }
    const tokens = tokenReport(tools);
    const scale = contextArithmetic(tokens);
    const truth: Record<string, [string, number, string]> = {
      full: ['(a) the full JSON', tokens.fullListTokens, 'measured now, the three tools as tools/list sends them'],
      names: [
        '(b) names and descriptions',
        tokens.namesAndDescriptionsTokens,
        'measured now, name and description of each',
      ],
      'per-step': [
        '(c) per step',
        scale.perStep,
        `40 tools x ${scale.tokensPerTool} tokens a tool (${tokens.fullListTokens} / 3, rounded)`,
      ],
      task: ['(c) a 20-step task', scale.perTask, `20 steps x ${scale.perStep}: the list is sent again every step`],
    };
    const verdicts: Verdict[] = [];
    for (const [flag, value] of Object.entries(given)) {
      if (value === undefined) continue;
      const [label, expected, why] = truth[flag] as [string, number, string];
      verdicts.push({
        label,
        right: Math.abs(value - expected) <= expected * 0.02,
        said: String(value),
        why: `${expected}: ${why}`,
      });
    }
    print('\n');
    return printVerdicts(verdicts);
  }
  if (exercise === 'backoff') {
    if (!file) throw new UsageError('usage: agent check backoff FILE.mjs (start from examples/lecture/backoff.mjs)');
    return printVerdicts(await judgeBackoff(file));
  }
  throw new UsageError(CHECK_USAGE);
}
