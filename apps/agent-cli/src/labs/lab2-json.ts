// Lab 2 (lecture section 4): JSON round-trip pitfalls, in JavaScript's terms, and the table of
// bad tool arguments with the messages our validator gives a model.
import { isDeepStrictEqual } from 'node:util';
import { compileValidator } from '@agentwire/schemas/validation';
import { table } from './table.js';

function roundTrip(label: string, make: () => unknown): Array<string> {
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

export async function lab2(print: (text: string) => void): Promise<void> {
  print('Demo 1: what survives JSON.stringify and JSON.parse\n');
  print(
    table(
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
        roundTrip('2 ** 70', () => 2 ** 70),
        roundTrip('{ 1: "a" } (number key)', () => ({ 1: 'a' })),
        roundTrip('"体" (one CJK character)', () => '体'),
      ],
    ),
  );
  print(
    `\n"体" is ${Buffer.byteLength(JSON.stringify({ t: '体' }))} bytes as {"t":"体"}; escaped as {"t":"\\u4f53"} it is ${Buffer.byteLength('{"t":"\\u4f53"}')}.`,
  );

  print('\n\nDemo 2: the arguments models get wrong, and what the validator tells them\n');
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
  ];
  print(
    table(
      ['the model wrote', 'the problem', 'what the validator says'],
      cases.map(([args, problem, validate]) => {
        const result = validate(JSON.parse(args));
        return [args, problem, result.ok ? 'valid' : result.errors.join('; ')];
      }),
    ),
  );
}
