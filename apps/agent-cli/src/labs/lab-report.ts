// What a lab shows, kept as data: demos with tables, notes and wire excerpts. As text it prints
// as it goes, fitted to an 80-column terminal; with --json it prints one document at the end,
// for a notebook or a test.
import { renderTable, wrapText } from '../text-table.js';

export type LabValue = string | number | boolean | null;

export interface LabTable {
  columns: string[];
  rows: LabValue[][];
}

export interface LabDemo {
  title: string;
  tables: LabTable[];
  notes: string[];
  /** Bytes as they went over a socket or a pipe, CRLF shown as line breaks. */
  wire: string[];
}

export const TERMINAL_WIDTH = 80;

export class LabReport {
  readonly demos: LabDemo[] = [];

  constructor(
    readonly lab: number,
    readonly title: string,
    private readonly print: ((text: string) => void) | undefined,
  ) {}

  /** Starts the next demo. */
  demo(title: string): void {
    this.demos.push({ title, tables: [], notes: [], wire: [] });
    this.print?.(`${this.demos.length > 1 ? '\n\n' : ''}Demo ${this.demos.length}: ${title}\n`);
  }

  table(columns: string[], rows: LabValue[][]): void {
    this.#current().tables.push({ columns, rows });
    this.print?.(
      renderTable(
        columns.map((title) => ({ title })),
        rows.map((row) => row.map((cell) => (cell === null ? '-' : typeof cell === 'boolean' ? String(cell) : cell))),
        TERMINAL_WIDTH,
      ),
    );
  }

  note(text: string): void {
    this.#current().notes.push(text);
    this.print?.(`\n${wrapText(text, TERMINAL_WIDTH).join('\n')}`);
  }

  wire(text: string): void {
    this.#current().wire.push(text);
    this.print?.(text);
  }

  toJSON(): { lab: number; title: string; demos: LabDemo[] } {
    return { lab: this.lab, title: this.title, demos: this.demos };
  }

  #current(): LabDemo {
    const demo = this.demos[this.demos.length - 1];
    if (!demo) throw new Error('LabReport: call demo() before adding to it');
    return demo;
  }
}
