import { describe, expect, it } from 'vitest';
import {
  compileLinearPattern,
  compileValidator,
  createAjv,
  MAX_PATTERN_COST,
  MAX_PATTERN_LENGTH,
  patternProblem,
} from '../src/validation.js';

// Backtracking would need about 2^5000 steps on this input: without the linear-time engine
// these tests never answer, and vitest fails them at its timeout.
const CATASTROPHIC = '^(a+)+$';
const HOSTILE_INPUT = `${'a'.repeat(5_000)}!`;

describe('patterns from documents we did not write', () => {
  it('match in linear time: the classic catastrophic pattern answers on a long input', () => {
    const pattern = compileLinearPattern(CATASTROPHIC);
    expect(pattern.test(HOSTILE_INPUT)).toBe(false);
    expect(pattern.test('a'.repeat(5_000))).toBe(true);
  });

  it('keep JSON Schema meaning (found anywhere unless anchored) and the ECMAScript dialect', () => {
    expect(compileLinearPattern('b').test('abc')).toBe(true);
    expect(compileLinearPattern('^b').test('abc')).toBe(false);
    expect(compileLinearPattern('^\\u00e9t\\u00e9$').test('été')).toBe(true);
    expect(compileLinearPattern('^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$').test('ada@example.org')).toBe(true);
    expect(compileLinearPattern('^\\p{L}+$').test('Ωmega')).toBe(true);
  });

  it('refuse what RE2 cannot run, too long or too costly, saying why', () => {
    expect(patternProblem('(?=a)b')).toMatch(/RE2.*no lookaround/);
    expect(patternProblem('(a)\\1')).toMatch(/backreferences/);
    expect(patternProblem('a'.repeat(MAX_PATTERN_LENGTH + 1))).toBe(
      `it is ${MAX_PATTERN_LENGTH + 1} characters long; at most ${MAX_PATTERN_LENGTH} are taken`,
    );
    expect(patternProblem('[a-z]{0,1000}'.repeat(5))).toMatch(
      new RegExp(`too large to compile \\(estimated \\d+, at most ${MAX_PATTERN_COST}\\)`),
    );
    expect(patternProblem('^.{0,1000}$')).toBeUndefined();
    expect(patternProblem(CATASTROPHIC)).toBeUndefined();
  });

  it('run inside Ajv when an instance asks for them, patternProperties included', () => {
    const ajv = createAjv({ linearPatterns: true });
    const check = compileValidator<unknown>(
      {
        type: 'object',
        properties: { name: { type: 'string', pattern: CATASTROPHIC } },
        patternProperties: { '^(x+)+$': { type: 'integer' } },
      },
      ajv,
    );
    const result = check({ name: HOSTILE_INPUT, [`${'x'.repeat(5_000)}!`]: 'not checked', xxx: 'text' });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors).toEqual([
      `$.name: '${'a'.repeat(57)}...' does not match pattern ${CATASTROPHIC}`,
      '$.xxx: expected integer, got string',
    ]);
    expect(() => compileValidator({ type: 'string', pattern: '(?<=a)b' }, createAjv({ linearPatterns: true }))).toThrow(
      /cannot run it/,
    );
  });
});
