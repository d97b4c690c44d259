// A plain-text table for a terminal: headers that may span lines (so a narrow column can keep a
// long name), numbers right-aligned, empty cells blank. No box drawing, so it copies cleanly.

export interface Column {
  /** Header lines, top to bottom ("bytes\nsent"); shorter headers sit on the bottom line. */
  title: string;
  align?: 'left' | 'right';
}

export type Cell = string | number | undefined;

const GAP = '  ';

/** Renders the rows under the headers, each column as wide as its widest line. */
export function renderTable(columns: Column[], rows: Cell[][]): string {
  const titles = columns.map((c) => c.title.split('\n'));
  const headerHeight = Math.max(...titles.map((t) => t.length));
  const texts = rows.map((row) => columns.map((_, i) => (row[i] === undefined ? '' : String(row[i]))));
  const widths = columns.map((_, i) =>
    Math.max(...(titles[i] ?? []).map((t) => t.length), ...texts.map((r) => (r[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (columns[i]?.align === 'right' ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join(GAP)
      .trimEnd();
  const header: string[] = [];
  for (let h = 0; h < headerHeight; h++) {
    header.push(line(titles.map((t) => t[h - (headerHeight - t.length)] ?? '')));
  }
  return [...header, ...texts.map(line)].join('\n');
}
