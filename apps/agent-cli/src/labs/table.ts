// Prints a table the way the lecture shows them: a header row and aligned columns.
import { renderTable } from '../text-table.js';

export function table(headers: string[], rows: Array<Array<string | number>>): string {
  return renderTable(
    headers.map((title) => ({ title })),
    rows,
  );
}
