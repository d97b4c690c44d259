// What the agent answers when a server asks its user something mid-call: `elicitation/create`,
// alone or as an input request of a multi round-trip result (2026-07-28), which the SDK then
// retries with the answers and the server's requestState echoed byte for byte. At a terminal the
// person answers each field of the form on stderr/stdin; anywhere else (a pipe, CI) the agent
// declines and says so, so that no call goes ahead on a yes nobody gave. `--approve` says yes to
// every question in a script instead (each field's default; a yes for a yes/no), with a log line
// for each: a gateway's approval of a destructive call, given on purpose by whoever ran it.
let approveAll = false;

/** --approve: answer yes to every question from now on, each with a log line on stderr. */
export function approveEverything(on: boolean): void {
  approveAll = on;
}

import { createInterface } from 'node:readline/promises';

type Field = { type?: string; description?: string; title?: string; enum?: unknown[]; default?: unknown };
type Answer = { action: 'accept'; content: Record<string, string | number | boolean> } | { action: 'decline' };

/** The form's questions, and what the person typed as a value of each field's type. */
export async function askAtTerminal(message: string, schema: unknown): Promise<Answer> {
  const properties = ((schema as { properties?: Record<string, Field> } | undefined)?.properties ?? {}) as Record<
    string,
    Field
  >;
  if (approveAll) {
    const content: Record<string, string | number | boolean> = {};
    for (const [name, field] of Object.entries(properties)) {
      const value = field.default ?? (field.type === 'boolean' ? true : undefined);
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        process.stderr.write(
          `the server asks: ${message}\n  declined: --approve has no answer for '${name}' (no default)\n`,
        );
        return { action: 'decline' };
      }
      content[name] = value;
    }
    process.stderr.write(`approved (--approve): ${message.split('\n').join(' | ')}\n`);
    return { action: 'accept', content };
  }
  if (!process.stdin.isTTY) {
    process.stderr.write(`the server asks: ${message}\n  declined: no terminal to ask at\n`);
    return { action: 'decline' };
  }
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write(`the server asks: ${message}\n`);
    const content: Record<string, string | number | boolean> = {};
    for (const [name, field] of Object.entries(properties)) {
      const label = field.title ?? field.description ?? name;
      const choices = Array.isArray(field.enum)
        ? ` (${field.enum.join(' / ')})`
        : field.type === 'boolean'
          ? ' (y/n)'
          : '';
      const typed = (await terminal.question(`  ${label}${choices}: `)).trim();
      if (typed === '') return { action: 'decline' };
      if (field.type === 'boolean') content[name] = /^y(es)?$/i.test(typed);
      else if (field.type === 'number' || field.type === 'integer') content[name] = Number(typed);
      else content[name] = typed;
    }
    return { action: 'accept', content };
  } finally {
    terminal.close();
  }
}

/** The client capability that goes with it: form elicitation. */
export const ELICITATION_CAPABILITY = { elicitation: { form: {} } } as const;
