// Where the agent writes to the terminal. Everything it prints passes through `shown`, so text
// from strangers in it (spec descriptions, bodies, upstream errors, streamed text) is shown, not
// obeyed; the agent's own text has no control characters beyond line ends and tabs, and passes
// unchanged. (The spinner in progress-output.ts writes its own control sequences, and cleans the
// text it is given the same way.)
import { shown } from './terminal-text.js';

export function print(text: string): void {
  process.stdout.write(shown(text));
}

export function printError(text: string): void {
  process.stderr.write(shown(text));
}
