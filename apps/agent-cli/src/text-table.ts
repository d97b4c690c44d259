// A plain-text table for a terminal: headers that may span lines (so a narrow column can keep a
// long name), numbers right-aligned, empty cells blank. No box drawing, so it copies cleanly.
// Given a width (80 columns, say), the widest text columns wrap at spaces until the table fits.

export interface Column {
  /** Header lines, top to bottom ("bytes\nsent"); shorter headers sit on the bottom line. */
  title: string;
  align?: 'left' | 'right';
}

export type Cell = string | number | undefined;

const GAP = '  ';
/** A column is never wrapped narrower than this. */
const MIN_WRAP = 12;

/** Breaks text into lines of at most `width`, at spaces where it can, mid-word where it must. */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      let rest = word;
      while (rest.length > width) {
        if (line) lines.push(line);
        lines.push(rest.slice(0, width));
        line = '';
        rest = rest.slice(width);
      }
      if (!line) line = rest;
      else if (line.length + 1 + rest.length <= width) line += ` ${rest}`;
      else {
        lines.push(line);
        line = rest;
      }
    }
    lines.push(line);
  }
  return lines;
}

/**
 * Renders the rows under the headers, each column as wide as its widest line; with `maxWidth`,
 * the widest left-aligned columns wrap until every line fits (or every such column is narrow).
 */
export function renderTable(columns: Column[], rows: Cell[][], maxWidth = Number.POSITIVE_INFINITY): string {
  const titles = columns.map((c) => c.title.split('\n'));
  const headerHeight = Math.max(...titles.map((t) => t.length));
  const texts = rows.map((row) => columns.map((_, i) => (row[i] === undefined ? '' : String(row[i]))));
  const longestWord = (i: number) =>
    Math.max(...(titles[i] ?? []).map((t) => t.length), ...texts.map((r) => (r[i] ?? '').length));
  const widths = columns.map((_, i) => longestWord(i));
  const total = () => widths.reduce((a, b) => a + b, 0) + GAP.length * (columns.length - 1);
  // Water-filling: narrow the widest wrappable column one character at a time, so that the
  // wrapping is shared by the long columns instead of falling on one.
  let overflow = total() - maxWidth;
  while (overflow > 0) {
    let widest = -1;
    columns.forEach((c, i) => {
      if (
        c.align !== 'right' &&
        (widths[i] ?? 0) > MIN_WRAP &&
        (widest < 0 || (widths[i] ?? 0) > (widths[widest] ?? 0))
      )
        widest = i;
    });
    if (widest < 0) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
    overflow--;
  }
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (columns[i]?.align === 'right' ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join(GAP)
      .trimEnd();
  const header: string[] = [];
  for (let h = 0; h < headerHeight; h++) {
    header.push(line(titles.map((t) => t[h - (headerHeight - t.length)] ?? '')));
  }
  const body = texts.flatMap((row) => {
    const wrapped = row.map((cell, i) =>
      cell.length > (widths[i] ?? 0) ? wrapText(cell, widths[i] ?? cell.length) : [cell],
    );
    const height = Math.max(...wrapped.map((w) => w.length));
    return Array.from({ length: height }, (_, k) => line(wrapped.map((w) => w[k] ?? '')));
  });
  return [...header, ...body].join('\n');
}
