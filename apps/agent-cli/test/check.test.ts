// `agent check`: a learner's answers to the lecture's exercises, right and wrong, through the
// built command. Exercise 2's answers are held against what `agent get` really waits.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAgent } from './support/run-agent.js';

/** The output with its line wrapping undone. */
const flat = (text: string) => text.replace(/\s+/g, ' ');
const STARTER = new URL('../../../examples/lecture/backoff.mjs', import.meta.url).pathname;

describe('agent check ex2', () => {
  it("accepts the lecture's own answer and says so for each part", async () => {
    const r = await runAgent([
      'check',
      'ex2',
      ...'--attempts 6 --waits 0.25,0.5,1,2,4 --total-wait 7.75 --worst 19.75 --step 59.25'.split(' '),
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(flat(r.stdout)).toContain('timeout=2 s, max_retries=5, base_delay=0.25 s');
    expect(r.stdout).toContain('all 5 right');
  });

  it('says which part is wrong, and why, with exit code 1', async () => {
    // The lecture's answer for (a) counts retries only; the worst case forgets the waits.
    const r = await runAgent(['check', 'ex2', '--attempts', '5', '--waits', '[0.25, 0.5, 1, 2, 4]', '--worst', '12']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /WRONG {2}\(a\) attempts: you said 5\n\s+the answer is 6: the first attempt and 5 retries/,
    );
    expect(r.stdout).toContain('right  (b) waits: you said [0.25, 0.5, 1, 2, 4]');
    expect(r.stdout).toMatch(
      /WRONG {2}\(c\) worst case: you said 12 s\n\s+the answer is 19.75 s: 6 attempts x 2 s timeout \+ 7.75 s of waits/,
    );
    expect(r.stdout).toContain('2 of 3 wrong');
  });

  it("a variant has other settings, and the client's cap on one wait shows in its answer", async () => {
    // Variant 23: base 1 s, 5 retries: 1, 2, 4, 8, then 16 is held to the 8 s cap.
    const question = await runAgent(['check', 'ex2', '--variant', '23']);
    expect(question.code).toBe(0);
    expect(flat(question.stdout)).toContain('max_retries=5, base_delay=1 s');
    const naive = await runAgent(['check', 'ex2', '--variant', '23', '--waits', '1,2,4,8,16']);
    expect(naive.code).toBe(1);
    expect(naive.stdout).toContain(
      "the answer is [1, 2, 4, 8, 8]: base 1 s x 2^k for k = 0..4, none longer than the client's cap of 8 s (capMs)",
    );
  });

  it('its waits are the ones agent get really waits with the same settings', async () => {
    // Variant 7: base 0.2 s, 2 retries: about 0.6 s of real waiting.
    const question = await runAgent(['check', 'ex2', '--variant', '7']);
    const command = /pnpm agent get '([^']+)' (.*)/.exec(question.stdout);
    expect(command, question.stdout).not.toBeNull();
    const [, path, flags] = command as RegExpExecArray;
    const real = await runAgent(['get', `${path}-${Date.now()}`, ...(flags as string).split(' ')]);
    const waits = /waits before the retries: \[([^\]]*)\]/.exec(real.stderr)?.[1];
    expect(waits, real.stderr).toBe('0.2, 0.4');
    const r = await runAgent(['check', 'ex2', '--variant', '7', '--attempts', '3', '--waits', waits as string]);
    expect(r.stdout).toContain('all 2 right');
  }, 30_000);

  it('refuses a malformed answer or variant, naming what is allowed', async () => {
    const bad = await runAgent(['check', 'ex2', '--waits', '0.25,soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--waits must be a number of seconds (or a count) of 0 or more, got 'soon'");
    const variant = await runAgent(['check', 'ex2', '--variant', '1000']);
    expect(variant.code).toBe(2);
    expect(variant.stderr).toContain("--variant must be a whole number from 0 to 999, got '1000'");
  });
});

describe('agent check ex3', () => {
  it('right when exactly the read, the computing POST and the DELETE are called safe', async () => {
    const r = await runAgent(['check', 'ex3', '--safe', 'a,b,d']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('all 4 right');
  });

  it('wrong when the reply is called safe, and says how to make it safe', async () => {
    const r = await runAgent(['check', 'ex3', '--safe', 'a,c']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('WRONG  (c) POST /emails/em-003/reply (sends a reply): you said safe');
    expect(r.stdout).toContain('send an Idempotency-Key');
    expect(r.stdout).toContain('3 of 4 wrong');
    const unknown = await runAgent(['check', 'ex3', '--safe', 'a,e']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--safe takes the letters a, b, c, d, got 'e'");
  });
});

describe('agent check backoff FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-check-'));

  it('the starter file is wrong, and each wrong case shows the arithmetic', async () => {
    const r = await runAgent(['check', 'backoff', STARTER]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('WRONG  retry 10, base 100, cap 2000, jitter 0.5, random 0.5: you said 1100 ms');
    expect(r.stdout).toContain('the answer is 1500 ms: 100 x 2^10 = 102400, capped at 2000, less 0.5 x 0.5 of it');
  });

  it('a right implementation passes every case', async () => {
    const file = join(dir, 'mine.mjs');
    writeFileSync(
      file,
      'export function backoffDelay(retry, { baseMs, capMs, jitter }, random) {\n' +
        '  const full = Math.min(baseMs * 2 ** retry, capMs);\n' +
        '  return Math.round(full - full * jitter * random());\n}\n',
    );
    const r = await runAgent(['check', 'backoff', file]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain('all 12 right');
  });

  it('one that forgets the cap is wrong only where the cap matters', async () => {
    const file = join(dir, 'uncapped.mjs');
    writeFileSync(
      file,
      'export const backoffDelay = (retry, o, random) => Math.round(o.baseMs * 2 ** retry * (1 - o.jitter * random()));\n',
    );
    const r = await runAgent(['check', 'backoff', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('WRONG  retry 5, base 500, cap 8000, jitter 0, random 0: you said 16000 ms');
    expect(r.stdout).toContain('right  retry 4, base 250, cap 8000, jitter 0, random 0: you said 4000 ms');
  });

  it('refuses a file that is not a module with backoffDelay, saying what it needs', async () => {
    const ts = await runAgent(['check', 'backoff', join(dir, 'mine.ts')]);
    expect(ts.code).toBe(2);
    expect(ts.stderr).toContain("takes a JavaScript module (.mjs or .js), got '");
    const empty = join(dir, 'empty.mjs');
    writeFileSync(empty, 'export const other = 1;\n');
    const r = await runAgent(['check', 'backoff', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('must export a function backoffDelay(retry, { baseMs, capMs, jitter }, random)');
  });
});

describe('agent check ex8', () => {
  it("measures our three tools now: the lecture's 346 and 4,613 are wrong here, the measured sizes right", async () => {
    const measured = await runAgent(['tools', '--only', 'office_days,get_email,read_document']);
    const full = /the full tools\/list JSON (\d+)/.exec(measured.stdout)?.[1];
    const names = /names and descriptions only (\d+)/.exec(measured.stdout)?.[1];
    const task = /a 20-step task: 20 x \d+ = (\d+)/.exec(measured.stdout)?.[1];
    expect(full && names && task, measured.stdout).toBeTruthy();
    const right = await runAgent([
      'check',
      'ex8',
      '--full',
      full as string,
      '--names',
      names as string,
      '--task',
      task as string,
    ]);
    expect(right.code, right.stdout).toBe(0);
    expect(right.stdout).toContain('all 3 right');
    const lecture = await runAgent(['check', 'ex8', '--full', '346', '--per-step', '4613']);
    expect(lecture.code).toBe(1);
    expect(lecture.stdout).toContain(
      `WRONG  (a) the full JSON: you said 346\n       the answer is ${full}: measured now`,
    );
    expect(lecture.stdout).toContain('2 of 2 wrong');
  }, 60_000);
});
