// What each layer did in a triage run, as rows (the `--json` summary) and as the table printed at
// the end: one group per path, the layer the agent talks to first, the gateway's work under it.
import { type RunRecord, summarize } from '../run-record.js';
import { type Cell, type Column, renderTable } from '../text-table.js';

/** One row per path and layer; '' where a figure does not apply (kept so for `--json`). */
export type SummaryRow = Record<string, string | number>;

export function summaryRows(
  record: RunRecord,
  modes: string[],
  walls: Map<string, number>,
  toolTokens: Map<string, number>,
): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const mode of modes) {
    const { layers, toolCalls } = summarize(record.entries, mode);
    for (const [layer, s] of layers) {
      rows.push({
        via: mode,
        layer,
        requests: s.requests,
        retries: s.retries,
        'failed attempts': s.failed,
        'bytes out': s.bytesOut,
        'bytes in': s.bytesIn,
        'backoff s': Number(s.backoffS.toFixed(2)),
        'retry-after s': Number(s.retryAfterS.toFixed(2)),
        'tool calls': layer === 'gateway' || layer === 'api' ? '' : toolCalls,
        'tool description tokens': layer === 'mcp-http' ? (toolTokens.get(mode) ?? '') : '',
        'wall s': Number(((walls.get(mode) ?? 0) / 1000).toFixed(2)),
      });
    }
    if (mode === 'mcp-stdio') {
      rows.push({
        via: mode,
        layer: 'mcp-stdio',
        requests: toolCalls,
        retries: 0,
        'failed attempts': 0,
        'bytes out': '',
        'bytes in': '',
        'backoff s': '',
        'retry-after s': '',
        'tool calls': toolCalls,
        'tool description tokens': toolTokens.get(mode) ?? '',
        'wall s': Number(((walls.get(mode) ?? 0) / 1000).toFixed(2)),
      });
    }
  }
  return rows;
}

// Units live in the headers, so the cells are bare numbers; two-line headers keep the table
// inside 80 columns.
const COLUMNS: Column[] = [
  { title: 'via\n  layer' },
  { title: 'reqs', align: 'right' },
  { title: 'retries', align: 'right' },
  { title: 'failed', align: 'right' },
  { title: 'bytes\nsent', align: 'right' },
  { title: 'bytes\nrecv', align: 'right' },
  { title: 'backoff\ns', align: 'right' },
  { title: 'Retry-\nAfter s', align: 'right' },
  { title: 'tool\ncalls', align: 'right' },
  { title: 'wall\ns', align: 'right' },
];

const LEGEND = 'reqs: HTTP requests (over stdio: tool calls) · failed: attempts that failed';

const blank = (v: string | number | undefined): Cell => (v === '' ? undefined : v);
const seconds = (v: string | number | undefined): Cell => (typeof v === 'number' ? v.toFixed(2) : undefined);

/**
 * The summary as a table: per path, the layer the agent spoke to, then the gateway's upstream
 * work indented under it; the tokens of the tool descriptions and a legend below.
 */
export function renderSummary(rows: SummaryRow[]): string {
  const paths = [...new Set(rows.map((r) => String(r.via)))];
  const cells: Cell[][] = [];
  const tokens = new Map<string, number>();
  for (const path of paths) {
    const group = rows.filter((r) => r.via === path);
    const own = group.filter((r) => r.layer === path);
    for (const row of [...own, ...group.filter((r) => r.layer !== path)]) {
      const first = row === own[0];
      cells.push([
        first ? path : `  ${row.layer}`,
        row.requests,
        row.retries,
        row['failed attempts'],
        blank(row['bytes out']),
        blank(row['bytes in']),
        seconds(row['backoff s']),
        seconds(row['retry-after s']),
        blank(row['tool calls']),
        first ? seconds(row['wall s']) : undefined,
      ]);
      const count = row['tool description tokens'];
      if (typeof count === 'number') tokens.set(path, count);
    }
  }
  const notes = [LEGEND];
  const counts = new Set(tokens.values());
  if (counts.size > 0) {
    const each = [...tokens].map(([path, n]) => `${n.toLocaleString('en-US')} (${path})`).join(', ');
    const figure = counts.size === 1 ? `${[...counts][0]?.toLocaleString('en-US')}` : each;
    notes.unshift(`tool descriptions sent to the model with every step: ${figure} tokens`);
  }
  return `${renderTable(COLUMNS, cells)}\n\n${notes.join('\n')}`;
}
