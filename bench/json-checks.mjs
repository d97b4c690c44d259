// What the http-client's checks of a JSON answer cost next to parsing it, on a page of 50
// emails (about 20 KB): the duplicate-key count (keys the text writes against keys the value
// holds) and the parsed-value scrub (walked only when the text has a backslash, as this one
// does). Medians of interleaved rounds, in microseconds per answer, and their ratio to JSON.parse.
//   usage: node bench/json-checks.mjs      (after pnpm build)
import { hasDuplicateKeys } from '../packages/http-client/dist/duplicate-keys.js';
import { Scrubber } from '../packages/http-client/dist/scrubber.js';
import { median } from './lib/util.mjs';

const page = {
  data: Array.from({ length: 50 }, (_, i) => ({
    id: `m-${String(i).padStart(4, '0')}`,
    from: 'alice@example.com',
    to: ['bob@example.com'],
    subject: `Subject ${i}: "quoted"`,
    date: '2026-06-10T09:00:00Z',
    urgent: i % 3 === 0,
    body: 'Hello,\nplease see the report: it is attached.\n'.repeat(5),
  })),
  next_cursor: null,
};
const text = JSON.stringify(page);
const scrubber = new Scrubber(['sk-live-0123456789abcdef']);
const REPS = 500;
const ROUNDS = 9;
const rows = { parse: [], duplicates: [], scrub: [] };
const time = (fn) => {
  const start = performance.now();
  for (let i = 0; i < REPS; i++) fn();
  return ((performance.now() - start) * 1000) / REPS;
};
for (let round = 0; round < ROUNDS; round++) {
  rows.parse.push(time(() => JSON.parse(text)));
  const value = JSON.parse(text);
  rows.duplicates.push(time(() => hasDuplicateKeys(text, value)));
  rows.scrub.push(time(() => scrubber.json(text, JSON.parse(text))) - rows.parse.at(-1));
}
const parse = median(rows.parse);
console.log(`a ${text.length}-byte page of 50 emails, medians of ${ROUNDS} rounds of ${REPS}:`);
console.log(`  JSON.parse            ${parse.toFixed(1)} µs`);
for (const name of ['duplicates', 'scrub']) {
  const m = median(rows[name]);
  console.log(`  ${name.padEnd(21)} ${m.toFixed(1)} µs  (${(m / parse).toFixed(2)}x the parse)`);
}
