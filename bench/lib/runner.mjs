// What every comparison shares: the settings of a run, the processes it starts (stopped at the
// end), sides measured round by round in turn, the checks that a side really answered, the
// rows of results, and the result file (and, for a full run, the table in BENCHMARKS.md).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { BENCH_DIR, cpuMicros, median, round, runJson, startProcess } from './util.mjs';

// Rounds even (as in bench/own-cpu-ab.mjs): a comparison of two sides puts each first as often.
const QUICK = {
  rounds: 4,
  seconds: 2,
  /** Requests per sample where own CPU per call is read (a fixed count, not a duration). */
  calls: 5000,
  connections: 32,
  latencyCalls: 500,
  stdioCalls: 1000,
  memoryCalls: 10_000,
  startupRuns: 5,
};
const FULL = {
  rounds: 6,
  seconds: 5,
  calls: 15_000,
  connections: 32,
  latencyCalls: 2000,
  stdioCalls: 3000,
  memoryCalls: 50_000,
  startupRuns: 9,
};

export const fmt = (n) => Math.round(n).toLocaleString('en-US');
export const rpsOf = (samples) => median(samples.map((s) => s.rps));
/** The median own CPU per request of process `name` over the samples, in µs. */
export const cpuOf = (samples, name) => median(samples.map((s) => s.cpuUs[name]));
/** A median in µs with the spread of the rounds: `327 µs (298–360)`. */
export const microsWithSpread = (values) =>
  `${fmt(median(values))} µs (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
/** Own CPU per request of process `name`, median and spread over the samples. */
export const cpuText = (samples, name) => microsWithSpread(samples.map((s) => s.cpuUs[name]));
/**
 * Side `a` over side `b` round by round (both ran in each round): the median of the rounds' own
 * ratios, and their range. A drift of the machine between rounds cancels within one, where a
 * ratio of two medians can take them from different rounds (bench/own-cpu-ab.mjs, an A/A run:
 * BENCHMARKS.md, "Reading a timed A/B").
 */
export function pairedRatio(a, b, value) {
  const ratios = a.map((sample, i) => value(sample) / value(b[i]));
  return { ratio: median(ratios), low: Math.min(...ratios), high: Math.max(...ratios) };
}
/** pairedRatio of process `name`'s own CPU per request. */
export const cpuRatio = (a, b, name) => pairedRatio(a, b, (s) => s.cpuUs[name]);
/**
 * `1.243x (rounds 1.12–1.31)`: three digits, so that a ratio just over its goal does not read as
 * the goal (a row read 0.15x, missed, against at most 0.15x: it was just over).
 */
export const ratioText = ({ ratio, low, high }) => `${ratio.toFixed(3)}x (rounds ${low.toFixed(2)}–${high.toFixed(2)})`;
export { median, round };

/** Throws when any sample had a failed request: the comparison would be meaningless. */
export function checkClean(name, samples) {
  const bad = samples.reduce(
    (n, s) => n + (s.non2xx ?? 0) + (s.errors ?? 0) + (s.timeouts ?? 0) + (s.mismatches ?? 0),
    0,
  );
  if (bad > 0) throw new Error(`${name}: ${bad} failed requests under load; the comparison would be meaningless`);
}

export async function createRunner({ quick }) {
  const settings = quick ? QUICK : FULL;
  const began = Date.now();
  const started = [];
  const rows = [];
  const dispatcher = new Agent({ connections: 64 });
  const script = (path) => join(BENCH_DIR, path);
  const memo = new Map();

  const runner = {
    quick,
    settings,
    rows,
    key: randomBytes(16).toString('hex'),
    token: randomBytes(16).toString('hex'),
    script,
    tmpFile: (name) => join(tmpdir(), `agentwire-bench-${name}-${process.pid}.json`),
    /** Starts a server script of bench/servers; it is stopped when the run ends. */
    async server(path, args, options) {
      const p = await startProcess(script(path), args, options);
      started.push(p);
      return p;
    },
    /** Starts something once per run, for the comparisons that share it. */
    once(name, start) {
      if (!memo.has(name)) memo.set(name, start());
      return memo.get(name);
    },
    /**
     * One autocannon run in its own process. With `cpu` ({name: pid}), each named process's own
     * CPU over the run is read from /proc and returned per request, as `cpuUs[name]`.
     */
    async autocannon(options, cpu = {}) {
      const before = Object.fromEntries(Object.entries(cpu).map(([name, pid]) => [name, cpuMicros(pid)]));
      const result = await runJson(script('clients/autocannon.mjs'), options);
      result.cpuUs = Object.fromEntries(
        Object.entries(cpu).map(([name, pid]) => [name, (cpuMicros(pid) - before[name]) / result.total]),
      );
      return result;
    },
    runJson: (path, input, options) => runJson(script(path), input, options),
    async http(url, init = {}) {
      const { statusCode, headers, body } = await request(url, { dispatcher, ...init });
      const text = await body.text();
      return { status: statusCode, headers, text };
    },
    /**
     * Runs every side once a round, for the rounds of the settings; returns each side's samples.
     * Each round starts one side further on, so that no side always runs first (after a pause)
     * or right after the same neighbour: the place in a round moved CPU per call by up to 8%.
     */
    async interleave(sides) {
      const entries = Object.entries(sides);
      const samples = Object.fromEntries(entries.map(([k]) => [k, []]));
      for (let r = 0; r < settings.rounds; r++) {
        for (let i = 0; i < entries.length; i++) {
          const [name, run] = entries[(r + i) % entries.length];
          samples[name].push(await run());
        }
      }
      return samples;
    },
    /** One result: `measure` against `goal`, with what it compared; `met: null` for a cost measured without a goal. */
    row({ id, comparison, ours, baseline, measure, goal, met, note = '' }) {
      rows.push({ id, comparison, ours, baseline, measure, goal, met, note });
      const verdict = met === null ? 'info  ' : met ? 'met   ' : 'MISSED';
      console.log(`  ${verdict} ${id}. ${comparison}: ${measure} (goal ${goal})`);
    },
    async close() {
      for (const p of started.reverse()) await p.stop();
      await dispatcher.close();
    },
    /** Writes the result file and prints the table; a full run also updates BENCHMARKS.md. */
    finish({ command, updateDoc }) {
      const machine = {
        cores: availableParallelism(),
        cpu: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
      };
      const result = {
        date: new Date(began).toISOString(),
        command,
        quick,
        settings,
        machine,
        durationS: round((Date.now() - began) / 1000, 1),
        rows,
      };
      mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
      const resultFile = join(BENCH_DIR, 'results', quick ? 'quick.json' : 'latest.json');
      writeFileSync(resultFile, `${JSON.stringify(result, null, 2)}\n`);
      console.log(
        `\n${rows.filter((r) => r.met === true).length} of ${rows.filter((r) => r.met !== null).length} goals met in ${result.durationS} s; results: ${resultFile}`,
      );
      console.table(
        rows.map((r) => ({
          '#': r.id,
          comparison: r.comparison,
          ours: r.ours,
          baseline: r.baseline,
          result: r.measure,
          goal: r.goal,
          met: r.met === null ? '-' : r.met ? 'yes' : 'NO',
        })),
      );
      if (updateDoc) updateBenchmarksDoc(result);
    },
  };
  // The toy API every comparison calls, with its key.
  runner.api = await runner.server('servers/toy-api.mjs', [runner.key]);
  return runner;
}

function updateBenchmarksDoc(result) {
  const { machine, settings } = result;
  const file = join(BENCH_DIR, '..', 'BENCHMARKS.md');
  const text = readFileSync(file, 'utf8');
  const table = [
    `Run of ${result.date.slice(0, 10)}: \`${result.command}\` on ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, ${machine.platform}; ${settings.rounds} interleaved rounds of ${settings.seconds} s, ${settings.connections} connections; ${result.durationS} s in all. Raw results: \`bench/results/latest.json\`.`,
    '',
    '| # | comparison | ours | baseline | result | goal | met |',
    '|---|---|---|---|---|---|---|',
    ...result.rows.map(
      (r) =>
        `| ${r.id} | ${r.comparison} | ${r.ours} | ${r.baseline} | ${r.measure} | ${r.goal} | ${r.met === null ? '-' : r.met ? 'yes' : '**no**'} |`,
    ),
  ].join('\n');
  // A function, not a string: a row may hold `$` patterns (`^(a+)+$` in row 9), which a
  // replacement string would expand (`$\`` is the text before the match: the whole file once).
  const updated = text.replace(
    /<!-- bench:start -->[\s\S]*<!-- bench:end -->/,
    () => `<!-- bench:start -->\n${table}\n<!-- bench:end -->`,
  );
  if (updated === text && !text.includes(table)) {
    throw new Error('BENCHMARKS.md has no <!-- bench:start --> ... <!-- bench:end --> block');
  }
  writeFileSync(file, updated);
  console.log(`updated ${file}`);
}
