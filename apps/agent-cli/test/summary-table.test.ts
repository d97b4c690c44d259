// The table at the end of `agent triage`: a real table (no index column, blank empty cells,
// numbers right-aligned, units in the headers) that fits an 80-column terminal.
import { describe, expect, it } from 'vitest';
import { renderTable } from '../src/text-table.js';
import { renderSummary, type SummaryRow } from '../src/triage/summary.js';

const row = (via: string, layer: string, figures: Partial<SummaryRow>): SummaryRow => ({
  via,
  layer,
  requests: 0,
  retries: 0,
  'failed attempts': 0,
  'bytes out': '',
  'bytes in': '',
  'backoff s': '',
  'retry-after s': '',
  'tool calls': '',
  'tool description tokens': '',
  'wall s': 0,
  ...figures,
});

// The rows as summaryRows makes them for `--via all` (the gateway's rows come first over stdio).
const ROWS: SummaryRow[] = [
  row('api', 'api', {
    requests: 25,
    retries: 4,
    'failed attempts': 4,
    'bytes out': 177,
    'bytes in': 9754,
    'backoff s': 1.25,
    'retry-after s': 2,
    'wall s': 4.27,
  }),
  row('mcp-stdio', 'gateway', {
    requests: 25,
    retries: 4,
    'failed attempts': 4,
    'bytes out': 177,
    'bytes in': 9754,
    'backoff s': 1.38,
    'retry-after s': 2,
    'wall s': 5.83,
  }),
  row('mcp-stdio', 'mcp-stdio', { requests: 21, 'tool calls': 21, 'tool description tokens': 3576, 'wall s': 5.83 }),
  row('mcp-http', 'mcp-http', {
    requests: 23,
    'bytes out': 7282,
    'bytes in': 49537,
    'backoff s': 0,
    'retry-after s': 0,
    'tool calls': 21,
    'tool description tokens': 3576,
    'wall s': 4.34,
  }),
  row('mcp-http', 'gateway', {
    requests: 25,
    retries: 4,
    'failed attempts': 4,
    'bytes out': 177,
    'bytes in': 9754,
    'backoff s': 1.23,
    'retry-after s': 2,
    'wall s': 4.34,
  }),
];

describe('the triage summary table', () => {
  it('groups each path with the gateway under it, right-aligns numbers, leaves empty cells blank', () => {
    const lines = renderSummary(ROWS).split('\n');
    expect(lines.slice(0, 9)).toEqual([
      'via                               bytes  bytes  backoff   Retry-   tool  wall',
      '  layer    reqs  retries  failed   sent   recv        s  After s  calls     s',
      'api          25        4       4    177   9754     1.25     2.00         4.27',
      'mcp-stdio    21        0       0                                     21  5.83',
      '  gateway    25        4       4    177   9754     1.38     2.00',
      'mcp-http     23        0       0   7282  49537     0.00     0.00     21  4.34',
      '  gateway    25        4       4    177   9754     1.23     2.00',
      '',
      'tool descriptions sent to the model with every step: 3,576 tokens',
    ]);
  });

  it('fits in 80 columns, with no index column and no quoted empty cells', () => {
    const text = renderSummary(ROWS);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(text).not.toContain('(index)');
    expect(text).not.toContain("''");
    expect(text).not.toMatch(/[│┌└]/);
  });

  it('names each path when the paths sent different tool descriptions', () => {
    const rows = ROWS.map((r) =>
      r.via === 'mcp-http' && r.layer === 'mcp-http' ? { ...r, 'tool description tokens': 4000 } : r,
    );
    expect(renderSummary(rows)).toContain(
      'tool descriptions sent to the model with every step: 3,576 (mcp-stdio), 4,000 (mcp-http) tokens',
    );
  });
});

describe('renderTable', () => {
  it('puts a short header on the bottom line of a tall one, and aligns each column its own way', () => {
    const text = renderTable(
      [{ title: 'name' }, { title: 'bytes\nsent', align: 'right' }],
      [
        ['a', 1],
        ['bbb', undefined],
      ],
    );
    expect(text).toBe(['      bytes', 'name   sent', 'a         1', 'bbb'].join('\n'));
  });
});
