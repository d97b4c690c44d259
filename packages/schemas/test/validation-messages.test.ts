import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  compileValidator,
  createAjv,
  DigestRequest,
  Email,
  EmployeeId,
  formatValidationErrors,
  jsonPath,
  ListEmployeesQuery,
  Team,
} from '../src/index.js';

const OfficeDaysArgs = Type.Object({ employee_id: EmployeeId }, { additionalProperties: false });
const Args = Type.Object(
  {
    team: Type.Optional(Team),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    note: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 2 })),
  },
  { additionalProperties: false },
);

const officeDays = compileValidator(OfficeDaysArgs);
const args = compileValidator(Args);

describe('validation messages a model can act on', () => {
  it('names a missing required property at its parent', () => {
    expect(officeDays({})).toEqual({ ok: false, errors: ["$: missing required property 'employee_id'"] });
  });

  it('shows the pattern a string must match', () => {
    expect(officeDays({ employee_id: 'Ed Brandt' })).toEqual({
      ok: false,
      errors: ["$.employee_id: 'Ed Brandt' does not match pattern ^e-\\d{2}$"],
    });
  });

  it('names the expected and the received type', () => {
    expect(officeDays({ employee_id: 5 })).toEqual({
      ok: false,
      errors: ['$.employee_id: expected string, got integer'],
    });
  });

  it('lists the allowed properties when an unexpected one is sent', () => {
    expect(officeDays({ employee_id: 'e-05', verbose: true })).toEqual({
      ok: false,
      errors: ["$: unexpected property 'verbose' (allowed: ['employee_id'])"],
    });
  });

  it('lists the allowed values of an enum with what was sent', () => {
    expect(args({ team: 'sales' })).toEqual({
      ok: false,
      errors: ["$.team: must be one of ['firmware', 'analytics', 'legal'], got 'sales'"],
    });
    expect(args({ team: 'Firmware' }).ok).toBe(false);
  });

  it('states the maximum and minimum', () => {
    expect(args({ limit: 999 })).toEqual({ ok: false, errors: ['$.limit: 999 is above maximum 50'] });
    expect(args({ limit: 0 })).toEqual({ ok: false, errors: ['$.limit: 0 is below minimum 1'] });
  });

  it('does not coerce "2" to 2, and does not take true as an integer', () => {
    expect(args({ limit: '2' })).toEqual({ ok: false, errors: ['$.limit: expected integer, got string'] });
    expect(args({ limit: true })).toEqual({ ok: false, errors: ['$.limit: expected integer, got boolean'] });
    expect(args({ limit: 2.5 })).toEqual({ ok: false, errors: ['$.limit: expected integer, got number 2.5'] });
    expect(args({ limit: 2 })).toEqual({ ok: true, value: { limit: 2 } });
  });

  it('writes one line per problem, all of them at once', () => {
    const result = args({ team: 'sales', limit: 999, verbose: 1 });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors).toHaveLength(3);
      expect(result.errors).toContain("$.team: must be one of ['firmware', 'analytics', 'legal'], got 'sales'");
      expect(result.errors).toContain('$.limit: 999 is above maximum 50');
      expect(result.errors.find((l) => l.startsWith("$: unexpected property 'verbose'"))).toBe(
        "$: unexpected property 'verbose' (allowed: ['team', 'limit', 'note', 'tags'])",
      );
    }
  });

  it('folds a union into one line with the alternatives', () => {
    expect(args({ note: 3 })).toEqual({ ok: false, errors: ['$.note: must be one of: string; null; got 3'] });
  });

  it('points into arrays and explains lengths', () => {
    expect(args({ tags: ['a', ''] })).toEqual({
      ok: false,
      errors: ['$.tags[1]: is 0 characters long, shorter than minLength 1'],
    });
    expect(args({ tags: ['a', 'b', 'c'] })).toEqual({
      ok: false,
      errors: ['$.tags: has 3 items, more than maxItems 2'],
    });
  });

  it('explains what a format expects', () => {
    const digest = compileValidator(DigestRequest);
    expect(digest({ date: '10/06/2026' })).toEqual({
      ok: false,
      errors: ["$.date: '10/06/2026' is not a date as YYYY-MM-DD"],
    });
    expect(digest({ date: '2026-02-30' }).ok).toBe(false);
  });

  it('fills in schema defaults on valid input', () => {
    expect(compileValidator(DigestRequest)({ date: '2026-06-10' })).toEqual({
      ok: true,
      value: { date: '2026-06-10', max_items: 5 },
    });
  });

  it('shortens long strings in messages', () => {
    const result = officeDays({ employee_id: 'x'.repeat(500) });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]!.length).toBeLessThan(120);
  });

  it('coerces query-string values only when asked to', () => {
    const query = compileValidator(ListEmployeesQuery, createAjv({ coerceTypes: true }));
    expect(query({ limit: '2' })).toEqual({ ok: true, value: { limit: 2 } });
    expect(query({ limit: 'two' })).toEqual({ ok: false, errors: ['$.limit: expected integer, got string'] });
  });

  it('validates nested entities', () => {
    const email = compileValidator(Email);
    const result = email({ id: 'm-1' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toContain("$.id: 'm-1' does not match pattern ^m-\\d{4}$");
  });

  it('returns nothing for no errors', () => {
    expect(formatValidationErrors(null)).toEqual([]);
  });
});

describe('jsonPath', () => {
  it('turns JSON pointers into readable paths', () => {
    expect(jsonPath('')).toBe('$');
    expect(jsonPath('/a/0/b')).toBe('$.a[0].b');
    expect(jsonPath('/odd key/x~1y')).toBe("$['odd key']['x/y']");
  });
});

describe('validation messages under hostile input', () => {
  it('reports at most 20 problems and counts the rest, in linear work and a short answer', () => {
    const body: Record<string, number> = { employee_id: 1 };
    for (let i = 0; i < 10_000; i++) body[`extra_${i}`] = i;
    const result = officeDays(body);
    if (result.ok) throw new Error('expected problems');
    expect(result.errors).toHaveLength(21);
    expect(result.errors.at(-1)).toBe('... and 9981 more');
    expect(result.errors.join('\n').length).toBeLessThan(21 * 400);
    // The known property's own problem comes first; then the unknown ones, in the body's order.
    expect(result.errors[0]).toMatch(/^\$\.employee_id: /);
    expect(result.errors[1]).toBe("$: unexpected property 'extra_0' (allowed: ['employee_id'])");
    expect(result.errors[19]).toBe("$: unexpected property 'extra_18' (allowed: ['employee_id'])");
  });

  it('gives the same lines on the fast path (over 20 unknown properties) as Ajv gives below it', () => {
    const few: Record<string, unknown> = { employee_id: 'e-05' };
    const many: Record<string, unknown> = { employee_id: 'e-05' };
    for (let i = 0; i < 20; i++) few[`extra_${i}`] = i;
    for (let i = 0; i < 21; i++) many[`extra_${i}`] = i;
    const slow = officeDays(few);
    const fast = officeDays(many);
    if (slow.ok || fast.ok) throw new Error('expected problems');
    expect(fast.errors.slice(0, 20)).toEqual(slow.errors);
    expect(fast.errors[20]).toBe('... and 1 more');
  });

  it('cuts a very long line, and still folds a union into one line', () => {
    const many = Type.Object(
      Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`field_${i}`, Type.Optional(Type.String())])),
      { additionalProperties: false },
    );
    const result = compileValidator(many)({ nope: 1 });
    if (result.ok) throw new Error('expected a problem');
    expect(result.errors[0]).toMatch(/^\$: unexpected property 'nope' \(allowed: \['field_0', /);
    expect(result.errors[0]?.length).toBe(400);
    expect(result.errors[0]?.endsWith('...')).toBe(true);
    const union = args({ note: 3 });
    expect(union).toEqual({ ok: false, errors: ['$.note: must be one of: string; null; got 3'] });
  });
});
