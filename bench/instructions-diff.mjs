// Which functions two sides' instructions differ in: reads two dumps kept by
// `node bench/instructions.mjs --keep DIR` and prints the functions whose own instructions per
// call differ most, JavaScript included. Callgrind sees compiled JavaScript as bare addresses;
// V8's map of its compiled code (LABEL.perf-map, written with the dump) names them, taking the
// last function compiled at an address, since V8 reuses the memory of code it threw away.
// Usage: node bench/instructions-diff.mjs DIR/A.callgrind DIR/B.callgrind [--calls 1000] [--top 40] [--event Ir]
//   --event: another of the dump's events instead of instructions, from a run with --cache-sim
//   (I1mr: instruction cache misses, D1mr / D1mw: data, Bcm: mispredicted conditional branches)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    calls: { type: 'string', default: '1000' },
    top: { type: 'string', default: '40' },
    event: { type: 'string', default: 'Ir' },
  },
});
if (positionals.length !== 2) {
  throw new Error(
    'usage: node bench/instructions-diff.mjs A.callgrind B.callgrind [--calls 1000] [--top 40] [--event Ir]',
  );
}
for (const dump of positionals) {
  if (!existsSync(dump)) {
    throw new Error(`${dump}: no such callgrind dump (bench/instructions.mjs --keep DIR writes DIR/SIDE.callgrind)`);
  }
}
const calls = Number(values.calls);
const top = Number(values.top);

/** The code map as [start, end, name] in the order V8 wrote it (later entries win). */
function codeMap(dump) {
  const file = dump.replace(/\.callgrind$/, '.perf-map');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start, size, ...name] = line.split(' ');
      const from = Number.parseInt(start, 16);
      // One name for a function whatever tier compiled it (~ bytecode, ^ baseline, + * optimized).
      return [from, from + Number.parseInt(size, 16), name.join(' ').replace(/^JS:[~^+*]/, 'JS:')];
    });
}

/** Own instructions per function name, summed over every address a name was compiled to. */
function ownCounts(dump) {
  const annotated = spawnSync(
    'callgrind_annotate',
    ['--threshold=100', '--inclusive=no', `--show=${values.event}`, `--sort=${values.event}`, dump],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  // An event the dump does not have (--event I1mr of a run without --cache-sim) fails here.
  if (annotated.status !== 0) {
    throw new Error(
      `callgrind_annotate could not read ${dump} for --event ${values.event}: ${annotated.stderr.trim()}`,
    );
  }
  const out = annotated.stdout;
  const map = codeMap(dump);
  const counts = new Map();
  let total = 0;
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+) \([^)]*\)\s+(.*?)(?: \[[^\]]*\])?$/.exec(line);
    if (!m) continue;
    const n = Number(m[1].replaceAll(',', ''));
    if (m[2].includes('PROGRAM TOTALS')) {
      total = n;
      continue;
    }
    let name = m[2].replace(/^\?\?\?:/, '').replace(/\(.*$/, '');
    const address = /^0x([0-9a-f]+)$/.exec(name);
    if (address) {
      const at = Number.parseInt(address[1], 16);
      let found = 'compiled code not in the map';
      for (let i = map.length - 1; i >= 0; i--) {
        if (map[i][0] <= at && at < map[i][1]) {
          found = map[i][2];
          break;
        }
      }
      name = found;
    }
    counts.set(name, (counts.get(name) ?? 0) + n);
  }
  return { total, counts };
}

const [a, b] = positionals.map(ownCounts);
const names = new Set([...a.counts.keys(), ...b.counts.keys()]);
const per = (n) => n / calls;
const rows = [...names]
  .map((name) => ({ name, a: per(a.counts.get(name) ?? 0), b: per(b.counts.get(name) ?? 0) }))
  .sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a))
  .slice(0, top);
// Paths shortened to the package and file: `JS:inject @opentelemetry/api/dist/api/propagation.cjs:44:8`.
const short = (s) =>
  s
    .replace(/(file:\/\/)?\/\S*\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, '')
    .replace(/file:\/\/\/\S*?\/(apps|packages|bench)\//, '$1/')
    .slice(0, 130);
console.log(
  `Own ${values.event === 'Ir' ? 'instructions' : values.event} per call (${calls} calls): A = ${positionals[0]}, B = ${positionals[1]}`,
);
console.log(
  `in all: A ${per(a.total).toFixed(0)}, B ${per(b.total).toFixed(0)}, B - A ${(per(b.total) - per(a.total)).toFixed(0)}`,
);
console.log('| A | B | B - A | function |');
console.log('|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.a.toFixed(0)} | ${r.b.toFixed(0)} | ${(r.b - r.a > 0 ? '+' : '') + (r.b - r.a).toFixed(0)} | ${short(r.name)} |`,
  );
}
