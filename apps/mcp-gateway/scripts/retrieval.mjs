// The retrieval benchmark: tasks phrased as people ask for them, each with the operation that
// does it, over big APIs (GitHub's, and the APIs.guru directory's Stripe, Slack, Twilio, Jira,
// Kubernetes); how often search_operations puts the right operation first (recall@1), in its
// top five (recall@5), and the mean reciprocal rank (MRR), per API, next to plain BM25 over
// the same fields (no stemming, no synonyms: the floor any search should beat).
//
//   pnpm retrieval                              the table
//   pnpm retrieval --json out.json
//   pnpm retrieval --baseline retrieval/baseline.json   fails if recall@5 or MRR fall below it (CI)
//   pnpm retrieval --split tuning --misses      only the tasks search may be tuned on, and its misses
//   pnpm retrieval --browse                     also: recall within the wanted operation's group (browsing's ceiling)
//   pnpm retrieval --tasks retrieval/blind.json  150 tasks written blind, never tuned on
//
// A third of each API's tasks (every third one) is held out: search is tuned looking only at the
// other two thirds (--split tuning), and the held-out line of the table says whether what was
// learnt there carries over to tasks it never saw.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openApiToTools } from '../dist/index.js';
import { firstParagraph, OperationIndex } from '../dist/tools/dynamic-tools.js';
import { groupOf } from '../dist/tools/operation-search.js';
import { directory } from './corpus.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: join(here, '..', 'retrieval', 'tasks.json') },
    json: { type: 'string' },
    baseline: { type: 'string' },
    misses: { type: 'boolean', default: false },
    split: { type: 'string', default: 'all' },
    browse: { type: 'boolean', default: false },
  },
});

/** Where each API's document is: GitHub's from @octokit/openapi, the rest from the directory. */
function specPath(entry) {
  if (entry.spec === '@octokit/openapi') {
    return require.resolve('@octokit/openapi/generated/api.github.com.json');
  }
  return join(directory(), entry.spec);
}

/** Plain BM25 (k1 1.2, b 0.75) over one text per operation: the baseline. */
class Bm25 {
  constructor(tools) {
    this.docs = tools.map((t) => tokens(fieldsOf(t)));
    this.avg = this.docs.reduce((n, d) => n + d.length, 0) / Math.max(this.docs.length, 1);
    this.df = new Map();
    for (const d of this.docs) for (const w of new Set(d)) this.df.set(w, (this.df.get(w) ?? 0) + 1);
    this.tools = tools;
  }
  search(query, limit) {
    const q = tokens(query);
    const n = this.docs.length;
    const scored = this.docs.map((d, i) => {
      let score = 0;
      for (const w of q) {
        const tf = d.filter((x) => x === w).length;
        if (tf === 0) continue;
        const df = this.df.get(w) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / this.avg));
      }
      return { i, score };
    });
    return scored
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map((s) => ({ name: this.tools[s.i].name }));
  }
}

const fieldsOf = (t) =>
  [t.name, t.title ?? '', t.source.tags.join(' '), t.binding.path, firstParagraph(t.description)].join(' ');
const tokens = (text) =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/** The tool name an operationId became (names are sanitized and may be suffixed). */
function nameOf(tools, operationId) {
  return tools.find((t) => t.source.operationId === operationId)?.name;
}

function measure(search, tasks, tools) {
  let hit1 = 0;
  let hit5 = 0;
  let rr = 0;
  const misses = [];
  for (const task of tasks) {
    const wanted = new Set([task.expect, ...(task.also ?? [])].map((id) => nameOf(tools, id)).filter(Boolean));
    const hits = search(task.task, 10, task).map((h) => h.name);
    const rank = hits.findIndex((h) => wanted.has(h));
    if (rank === 0) hit1++;
    if (rank >= 0 && rank < 5) hit5++;
    if (rank >= 0) rr += 1 / (rank + 1);
    else misses.push({ task: task.task, expect: task.expect, got: hits.slice(0, 3) });
  }
  const n = Math.max(tasks.length, 1);
  return { tasks: tasks.length, recallAt1: hit1 / n, recallAt5: hit5 / n, mrr: rr / n, misses };
}

const SPLITS = ['all', 'tuning', 'held-out'];

/** Every third task of an API is held out from tuning. */
const heldOut = (indexInApi) => indexInApi % 3 === 2;

export function runRetrieval(file, split = 'all') {
  if (!SPLITS.includes(split)) throw new Error(`--split must be one of ${SPLITS.join(', ')}; got "${split}"`);
  const spec = JSON.parse(readFileSync(file, 'utf8'));
  // A blind set (retrieval/blind.json: written without seeing the tuning tasks or the thesaurus)
  // is held out whole; search is never tuned on it, and its misses are not printed.
  if (spec.blind && split !== 'all') throw new Error(`${file} is a blind set: it has no --split`);
  const rows = [];
  for (const [api, entry] of Object.entries(spec.apis)) {
    const document = JSON.parse(readFileSync(specPath(entry), 'utf8'));
    const tools = openApiToTools(document).tools;
    const tasks = spec.tasks
      .filter((t) => t.api === api)
      .map((t, i) => ({ ...t, heldOut: !spec.blind && heldOut(i) }))
      .filter((t) => split === 'all' || (split === 'held-out') === t.heldOut);
    const unknown = tasks.filter((t) => !nameOf(tools, t.expect));
    if (unknown.length > 0) {
      throw new Error(
        `${api}: ${unknown.length} tasks expect operations that are not tools: ${unknown.map((t) => t.expect).join(', ')}`,
      );
    }
    const building = performance.now();
    const index = new OperationIndex(tools);
    const buildMs = performance.now() - building;
    const times = [];
    const ours = measure(
      (q, n) => {
        const started = performance.now();
        const hits = index.search(q, n);
        times.push(performance.now() - started);
        return hits;
      },
      tasks,
      tools,
    );
    const baseline = new Bm25(tools);
    const bm25 = measure((q, n) => baseline.search(q, n), tasks, tools);
    const held = measure(
      (q, n) => index.search(q, n),
      tasks.filter((t) => t.heldOut),
      tools,
    );
    // Browsing's ceiling: the same words searched within the group of the operation wanted, as
    // if the model had picked the right group from search_operations' list of groups.
    const inGroup = measure(
      (q, n, task) => index.search(q, n, undefined, groupOf(tools.find((t) => t.name === nameOf(tools, task.expect)))),
      tasks,
      tools,
    );
    const groups = index.groups().length;
    rows.push({
      api,
      operations: tools.length,
      ours,
      bm25,
      held,
      inGroup,
      groups,
      medianQueryMs: median(times),
      buildMs,
    });
  }
  const all = (side) => {
    const n = rows.reduce((s, r) => s + r[side].tasks, 0);
    const sum = (k) => rows.reduce((s, r) => s + r[side][k] * r[side].tasks, 0) / Math.max(n, 1);
    return { tasks: n, recallAt1: sum('recallAt1'), recallAt5: sum('recallAt5'), mrr: sum('mrr') };
  };
  return {
    blind: spec.blind === true,
    rows,
    ours: all('ours'),
    bm25: all('bm25'),
    held: all('held'),
    inGroup: all('inGroup'),
  };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)];
}

function print(report) {
  const f = (x) => x.toFixed(2);
  const lines = [
    '| API | operations | tasks | recall@1 | recall@5 | MRR | BM25 recall@1 | BM25 recall@5 | BM25 MRR | median ms per query | index build ms |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...report.rows.map(
      (r) =>
        `| ${r.api} | ${r.operations.toLocaleString('en-US')} | ${r.ours.tasks} | ${f(r.ours.recallAt1)} | ${f(r.ours.recallAt5)} | ${f(r.ours.mrr)} | ${f(r.bm25.recallAt1)} | ${f(r.bm25.recallAt5)} | ${f(r.bm25.mrr)} | ${r.medianQueryMs.toFixed(2)} | ${Math.round(r.buildMs)} |`,
    ),
    `| all | | ${report.ours.tasks} | ${f(report.ours.recallAt1)} | ${f(report.ours.recallAt5)} | ${f(report.ours.mrr)} | ${f(report.bm25.recallAt1)} | ${f(report.bm25.recallAt5)} | ${f(report.bm25.mrr)} | | |`,
  ];
  if (report.held.tasks > 0 && report.held.tasks < report.ours.tasks) {
    lines.push(
      `| held-out | | ${report.held.tasks} | ${f(report.held.recallAt1)} | ${f(report.held.recallAt5)} | ${f(report.held.mrr)} | | | | | |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  if (values.browse) {
    const browse = [
      '',
      'Browsing: the same words searched within the group of the operation wanted (the ceiling of browsing, as if the model picked the right group):',
      '| API | groups | recall@1 | recall@5 | MRR |',
      '|---|---|---|---|---|',
      ...report.rows.map(
        (r) =>
          `| ${r.api} | ${r.groups} | ${f(r.inGroup.recallAt1)} | ${f(r.inGroup.recallAt5)} | ${f(r.inGroup.mrr)} |`,
      ),
      `| all | | ${f(report.inGroup.recallAt1)} | ${f(report.inGroup.recallAt5)} | ${f(report.inGroup.mrr)} |`,
    ];
    process.stdout.write(`${browse.join('\n')}\n`);
  }
  if (values.misses && report.blind) process.stdout.write('(a blind set: its misses are not shown)\n');
  else if (values.misses) {
    for (const r of report.rows) {
      for (const m of r.ours.misses)
        process.stdout.write(`miss ${r.api}: "${m.task}" -> ${m.got.join(', ')} (want ${m.expect})\n`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = runRetrieval(values.tasks, values.split);
  print(report);
  if (values.json) {
    const slim = {
      ...report,
      rows: report.rows.map((r) => ({
        ...r,
        ours: { ...r.ours, misses: undefined },
        bm25: { ...r.bm25, misses: undefined },
        held: { ...r.held, misses: undefined },
        inGroup: { ...r.inGroup, misses: undefined },
      })),
    };
    writeFileSync(values.json, `${JSON.stringify(slim, null, 2)}\n`);
  }
  if (values.baseline) {
    const base = JSON.parse(readFileSync(values.baseline, 'utf8'));
    const worse = ['recallAt5', 'mrr'].filter((k) => report.ours[k] + 1e-9 < base.ours[k]);
    for (const k of worse)
      process.stderr.write(
        `retrieval: ${k} ${report.ours[k].toFixed(3)} < ${base.ours[k].toFixed(3)} (${values.baseline})\n`,
      );
    if (worse.length === 0) process.stdout.write(`retrieval: no step back from ${values.baseline}\n`);
    process.exitCode = worse.length > 0 ? 1 : 0;
  }
}
