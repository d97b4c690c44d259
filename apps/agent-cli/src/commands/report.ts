// `agent report LEDGER --html out.html`: a self-contained page with a waterfall of the
// attempts and waits per layer, like a browser's network panel.
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { EXIT } from '../exit-codes.js';
import { html, toText } from '../html.js';
import { print } from '../print.js';
import { UsageError } from '../usage-error.js';

interface Row {
  via: string;
  layer: string;
  label: string;
  start: number;
  waitMs: number;
  waitReason: string | null;
  durationMs: number;
  status: number | null;
  errorType: string | null;
  bytesIn: number;
  /** The span of this line, when the run was traced. */
  spanId: string | null;
}

/** The traces the ledger's lines belong to (one per traced run), in order of appearance. */
export function traceIdsOf(lines: Array<Record<string, unknown>>): string[] {
  return [...new Set(lines.flatMap((e) => (typeof e.traceId === 'string' ? [e.traceId] : [])))];
}

const spanOf = (e: Record<string, unknown>) => (typeof e.spanId === 'string' ? e.spanId : null);

/** A ledger field as the type it must have; anything else (from a file, or a server) is absent. */
const num = (v: unknown, otherwise = 0) => (typeof v === 'number' && Number.isFinite(v) ? v : otherwise);
const numOrNull = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const strOrNull = (v: unknown) => (typeof v === 'string' ? v : null);

/** Rows in time order; the gateway's upstream attempts are placed inside their tool call. */
export function rowsFromLedger(lines: Array<Record<string, unknown>>): Row[] {
  const rows: Row[] = [];
  let lastToolStart = 0;
  let cursor = 0;
  for (const e of lines) {
    const via = String(e.via ?? '');
    if (e.kind === 'tool_call') {
      lastToolStart = Date.parse(String(e.time));
      cursor = lastToolStart;
      rows.push({
        via,
        layer: String(e.layer),
        label: `tool ${String(e.tool)}`,
        start: lastToolStart,
        waitMs: 0,
        waitReason: null,
        durationMs: num(e.durationMs),
        status: null,
        errorType: e.isError ? 'tool_error' : null,
        bytesIn: 0,
        spanId: spanOf(e),
      });
    } else if (e.kind === 'attempt' && e.layer === 'gateway') {
      const waitMs = num(e.waitMs);
      const start = cursor + waitMs;
      const durationMs = num(e.durationMs);
      cursor = start + durationMs;
      rows.push({
        via,
        layer: 'gateway → upstream',
        label: `${String(e.tool)} attempt ${String(e.attempt)}`,
        start,
        waitMs,
        waitReason: strOrNull(e.waitReason),
        durationMs,
        status: numOrNull(e.status),
        errorType: strOrNull(e.errorType),
        bytesIn: num(e.bytesReceived),
        spanId: spanOf(e),
      });
    } else if (e.kind === 'attempt') {
      rows.push({
        via,
        layer: String(e.layer),
        label: `${String(e.method)} ${String(e.route ?? e.path)}${Number(e.attempt) > 1 ? ` (attempt ${String(e.attempt)})` : ''}`,
        start: Date.parse(String(e.time)),
        waitMs: num(e.waitMs),
        waitReason: strOrNull(e.waitReason),
        durationMs: num(e.durationMs),
        status: numOrNull(e.status),
        errorType: strOrNull(e.errorType),
        bytesIn: num(e.bytesReceived),
        spanId: spanOf(e),
      });
    }
  }
  return rows;
}

export function renderReport(rows: Row[], source: string, traceIds: string[] = []): string {
  const sections = [...new Set(rows.map((r) => r.via))].map((via) => {
    const mine = rows.filter((r) => r.via === via);
    const t0 = Math.min(...mine.map((r) => r.start - r.waitMs));
    const t1 = Math.max(...mine.map((r) => r.start + r.durationMs));
    const span = Math.max(1, t1 - t0);
    const pct = (ms: number) => `${((ms / span) * 100).toFixed(3)}%`;
    const body = mine.map((r) => {
      const kind = r.errorType ? 'error' : r.status !== null && r.status >= 400 ? 'error' : 'ok';
      const wait =
        r.waitMs > 0
          ? html`<span class="wait" title="waited ${r.waitMs} ms (${r.waitReason ?? ''})" style="left:${pct(r.start - r.waitMs - t0)};width:${pct(r.waitMs)}"></span>`
          : null;
      const status = r.status ?? r.errorType ?? (r.label.startsWith('tool ') ? 'ok' : '');
      return html`<tr class="row ${kind}" data-layer="${r.layer}"${r.spanId ? html` data-span-id="${r.spanId}"` : null}><td class="layer">${r.layer}</td><td class="label">${r.label}</td><td class="status">${status}</td><td class="ms">${r.durationMs.toFixed(1)} ms</td><td class="lane">${wait}<span class="bar ${kind}" title="${r.label}: ${r.durationMs} ms" style="left:${pct(r.start - t0)};width:max(2px,${pct(r.durationMs)})"></span></td></tr>`;
    });
    return html`<section data-via="${via}"><h2>via ${via} <small>${mine.length} entries, ${(span / 1000).toFixed(2)} s</small></h2>
<table><thead><tr><th>layer</th><th>request</th><th>status</th><th>time</th><th class="lane">waterfall (hatched: waiting, backoff or Retry-After)</th></tr></thead><tbody>
${body}
</tbody></table></section>`;
  });
  const trace =
    traceIds.length > 0
      ? html`<p class="trace">trace ${traceIds.join(', ')} (each line's span id is its row's data-span-id)</p>`
      : html`<p class="trace">not traced (set OTEL_EXPORTER_OTLP_ENDPOINT to trace a run)</p>`;
  return toText(html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>agentwire ledger</title>
<style>
body{font:14px system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}small{color:#777;font-weight:normal}
table{border-collapse:collapse;width:100%}td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}
td.lane,th.lane{width:55%;position:relative}td.lane{height:16px}.bar,.wait{position:absolute;top:4px;height:10px;border-radius:2px}
.bar.ok{background:#3a8f5c}.bar.error{background:#c8463d}.wait{background:repeating-linear-gradient(45deg,#bbb 0 3px,#eee 3px 6px)}
tr.error td.status{color:#c8463d;font-weight:bold}td.layer{color:#555}
</style></head><body><h1>agentwire ledger</h1><p>${source}: ${rows.length} entries</p>
${trace}
${sections}
</body></html>
`);
}

export async function reportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { html: { type: 'string' } },
  });
  const ledger = positionals[0];
  if (!ledger || positionals.length > 1 || !values.html)
    throw new UsageError('usage: agent report LEDGER.jsonl --html OUT.html');
  let text: string;
  try {
    text = await readFile(ledger, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the ledger ${ledger}: ${(error as Error).message}`);
  }
  const lines = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new UsageError(`${ledger} line ${i + 1} is not JSON: is it a ledger written by agent triage?`);
      }
    });
  const rows = rowsFromLedger(lines);
  const traceIds = traceIdsOf(lines);
  await writeFile(values.html, renderReport(rows, ledger, traceIds));
  const traced = traceIds.length > 0 ? `, trace ${traceIds.join(', ')}` : ', not traced';
  print(`${values.html}: ${rows.length} entries${traced}\n`);
  return EXIT.ok;
}
