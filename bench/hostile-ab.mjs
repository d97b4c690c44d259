// Before and after, in one run and one process, for the two one-request denials of service of
// issue 15: the same schemas validated the old way and the new way, medians of 5.
//   1. A closed object with N unknown properties: Ajv (allErrors) and a message per error, as
//      before, against compileValidator's fast path (list 20, count the rest).
//   2. `^(a+)+$` from a spec on `a`*n + `!`: JavaScript's backtracking RegExp, as Ajv compiled it
//      before, against RE2JS (linear-time), as the gateway compiles it now.
// Usage: node bench/hostile-ab.mjs
import { createRequire } from 'node:module';

const require = createRequire(import.meta.resolve('@agentwire/mcp-gateway'));
const { compileValidator, createAjv, formatValidationErrors } = await import(
  require.resolve('@agentwire/schemas/validation')
);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  const samples = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return median(samples);
};

const schema = { type: 'object', properties: { employee_id: { type: 'string' } }, additionalProperties: false };
const ajv = createAjv({ useDefaults: false });
const before = ajv.compile(schema);
const after = compileValidator(schema, ajv);
console.log('1. unknown properties     before (Ajv, an error each)   after (fast path)   ratio');
for (const n of [1_000, 10_000, 70_000]) {
  const body = { employee_id: 'e-05' };
  for (let i = 0; i < n; i++) body[`x${i}`] = i;
  const b = time(() => {
    before(body);
    formatValidationErrors(before.errors);
  });
  const a = time(() => after(body));
  console.log(
    `   ${String(n).padStart(6)}                 ${b.toFixed(1).padStart(8)} ms${' '.repeat(21)}${a.toFixed(2).padStart(7)} ms   ${(a / b).toFixed(3)}`,
  );
}

const pattern = { type: 'string', pattern: '^(a+)+$' };
const backtracking = createAjv({ useDefaults: false }).compile(pattern);
const linear = createAjv({ useDefaults: false, linearPatterns: true }).compile(pattern);
console.log('2. ^(a+)+$ on a*n + !       before (RegExp)   after (RE2JS)');
for (const n of [16, 18, 20, 22, 24]) {
  const input = `${'a'.repeat(n)}!`;
  console.log(
    `   n = ${String(n).padStart(7)}            ${time(() => backtracking(input))
      .toFixed(1)
      .padStart(8)} ms   ${time(() => linear(input))
      .toFixed(3)
      .padStart(8)} ms`,
  );
}
for (const n of [1_000, 1_048_000]) {
  const input = `${'a'.repeat(n)}!`;
  console.log(
    `   n = ${String(n).padStart(7)}            (not run: 2^${n} steps)   ${time(() => linear(input))
      .toFixed(3)
      .padStart(8)} ms`,
  );
}
