// Lab 2 (lecture section 4): JSON round-trip pitfalls in JavaScript's terms (big integers,
// 2.0, duplicate keys), and the table of bad tool arguments with the messages our validator
// gives a model.
import { isDeepStrictEqual } from 'node:util';
import { compileValidator } from '@agentwire/schemas/validation';
import type { Stack } from '../embedded-stack.js';
import type { LabReport } from './lab-report.js';

function roundTrip(label: string, make: () => unknown): string[] {
  try {
    const value = make();
    const text = JSON.stringify(value);
    if (text === undefined) return [label, 'undefined (nothing written)', '-'];
    const back = JSON.parse(text) as unknown;
    if (isDeepStrictEqual(back, value)) return [label, text, 'same'];
    return [
      label,
      text,
      `CHANGED -> ${JSON.stringify(back)} (${Array.isArray(back) ? 'array' : back === null ? 'null' : typeof back})`,
    ];
  } catch (error) {
    return [label, `error: ${(error as Error).message}`, '-'];
  }
}

/** What JSON.parse makes of a number written in JSON text, and whether it kept its value. */
function parsedNumber(text: string, label: string, exact: bigint | undefined): string[] {
  const value = JSON.parse(text) as number;
  const kept = exact === undefined ? String(value) === text : BigInt(value) === exact;
  // Printed in full: the double's exact value, not JavaScript's shortest form (1.18e+21).
  return [
    `${text} ${label}`,
    Number.isInteger(value) ? BigInt(value).toString() : String(value),
    kept ? 'same' : `CHANGED by ${exact === undefined ? '?' : exact - BigInt(value)}`,
  ];
}

export async function lab2(stack: Stack, report: LabReport): Promise<void> {
  report.demo('what survives JSON.stringify and JSON.parse');
  report.table(
    ['JavaScript value', 'JSON.stringify gives', 'after JSON.parse'],
    [
      roundTrip('new Map([["a", 1]])', () => new Map([['a', 1]])),
      roundTrip('new Set([1, 2])', () => new Set([1, 2])),
      roundTrip('{ a: undefined, b: 1 }', () => ({ a: undefined, b: 1 })),
      roundTrip('[undefined, () => 1]', () => [undefined, () => 1]),
      roundTrip('NaN', () => Number.NaN),
      roundTrip('Infinity', () => Number.POSITIVE_INFINITY),
      roundTrip('new Date(0)', () => new Date(0)),
      roundTrip('2n ** 70n (BigInt)', () => 2n ** 70n),
      roundTrip('{ 1: "a" } (number key)', () => ({ 1: 'a' })),
      roundTrip('"体" (one CJK character)', () => '体'),
    ],
  );
  report.note(
    `"体" is ${Buffer.byteLength(JSON.stringify({ t: '体' }))} bytes as {"t":"体"}; escaped as {"t":"\\u4f53"} it is ${Buffer.byteLength('{"t":"\\u4f53"}')}.`,
  );

  report.demo('numbers: JSON text to a JavaScript number');
  report.table(
    ['JSON text', 'JSON.parse gives', 'the value'],
    [
      parsedNumber('9007199254740992', '(2^53)', 2n ** 53n),
      parsedNumber('9007199254740993', '(2^53 + 1)', 2n ** 53n + 1n),
      parsedNumber('1180591620717411303424', '(2^70)', 2n ** 70n),
      parsedNumber('1180591620717411303425', '(2^70 + 1)', 2n ** 70n + 1n),
      ['2.0', String(JSON.parse('2.0')), `Number.isInteger: ${Number.isInteger(JSON.parse('2.0'))}`],
    ],
  );
  report.note(
    'A JavaScript number is a double: above 2^53 it skips integers, so ids that big must travel as strings. 2^70 comes back intact only because a power of two is exact; 2^70 + 1 does not. JSON has one number type, so 2.0 is the integer 2 once parsed, and passes an integer schema.',
  );

  report.demo('a key written twice');
  const twice = '{"date": "2026-06-10", "date": "2026-06-11"}';
  const answer = await fetch(`${stack.apiUrl}/digest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: twice,
  });
  const refused = (await answer.json()) as { error?: { message: string } };
  report.table(
    ['reader', `of ${twice}`],
    [
      ['JSON.parse', `keeps the last: ${JSON.stringify(JSON.parse(twice))}`],
      ['the toy API, POST /digest', `${answer.status}: ${refused.error?.message ?? 'accepted'}`],
    ],
  );
  report.note(
    'JSON says names SHOULD be unique and leaves duplicates to each parser; some keep the first, most the last. Two programs reading one body differently is a bug waiting to happen, so the API refuses it.',
  );

  report.demo('the arguments models get wrong, and what the validator tells them');
  const check = compileValidator({
    type: 'object',
    properties: {
      employee_id: { type: 'string', pattern: '^e-\\d{2}$' },
      team: { enum: ['firmware', 'analytics', 'legal'] },
      limit: { type: 'integer', minimum: 1, maximum: 50 },
    },
    additionalProperties: false,
  });
  const requires = compileValidator({
    type: 'object',
    properties: { employee_id: { type: 'string' } },
    required: ['employee_id'],
    additionalProperties: false,
  });
  const cases: Array<[string, string, (v: unknown) => ReturnType<typeof check>]> = [
    ['{}', 'a required field is missing', requires],
    ['{"employee_id": "Ed Brandt"}', 'a name instead of an id', check],
    ['{"employee_id": 5}', 'the wrong type', check],
    ['{"employee_id": "e-05", "verbose": true}', 'an argument it made up', check],
    ['{"team": "Firmware"}', 'the wrong case for an enum', check],
    ['{"limit": 999}', 'over the maximum', check],
    ['{"limit": "2"}', 'a number written as a string', check],
    ['{"limit": true}', 'true is not an integer', check],
    ['{"limit": 2.0}', '2.0 for an integer', check],
  ];
  report.table(
    ['the model wrote', 'the problem', 'what the validator says'],
    cases.map(([args, problem, validate]) => {
      const result = validate(JSON.parse(args));
      return [args, problem, result.ok ? 'valid' : result.errors.join('; ')];
    }),
  );

  report.demo('an error message is part of the prompt: three ways to say one mistake');
  // The same refusal of {"team": "sales"} written three ways; the last one is our validator's.
  const ours = check({ team: 'sales' });
  report.table(
    ['style', 'what the model reads', 'can it fix its call?'],
    [
      ['too terse', 'invalid arguments', 'no: which field?'],
      ['where only', 'ValidationError at $.team', 'barely: what goes there?'],
      ['ours', ours.ok ? 'valid' : ours.errors.join('; '), 'yes: where, why, what is allowed'],
    ],
  );
  report.note(
    "The message goes back into the model's context as what it observed. Name the place, the reason and what is allowed; do not paste the whole schema, which the model already has.",
  );
}
