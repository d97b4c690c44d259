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
import { shownLine } from './terminal-text.js';

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

/**
 * A link the server asks its user to open (URL mode elicitation: connecting an account at a
 * third party, identity: connect). The agent never opens it: it shows the whole URL and its
 * host, so the person sees where it goes, and says yes only for a person: at a terminal they
 * open it, finish in their browser and press Enter; with --approve (a script a person watches)
 * the link is shown and the call waits while they open it. Anywhere else it declines, and the
 * link is still shown, to open before running again.
 */
export async function openLinkAtTerminal(message: string, url: string): Promise<{ action: 'accept' | 'decline' }> {
  let host = '(not a URL)';
  try {
    const parsed = new URL(url);
    host =
      parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.host : `${parsed.protocol} (not a web link)`;
  } catch {
    // shown as it is, and declined below
  }
  process.stderr.write(
    `the server asks you to open a link: ${shownLine(message)}\n  ${shownLine(url)}\n  (it goes to ${shownLine(host)}; the agent does not open it for you)\n`,
  );
  if (host.startsWith('(') || host.includes('not a web link')) {
    process.stderr.write('  declined: not an http(s) link\n');
    return { action: 'decline' };
  }
  if (approveAll) {
    process.stderr.write('  approved (--approve): waiting while you open it and finish there\n');
    return { action: 'accept' };
  }
  if (!process.stdin.isTTY) {
    process.stderr.write('  declined: no terminal to ask at; open the link, finish there, then run again\n');
    return { action: 'decline' };
  }
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const typed = (
      await terminal.question('  open it, finish in your browser, then press Enter (n to decline): ')
    ).trim();
    return /^n(o)?$/i.test(typed) ? { action: 'decline' } : { action: 'accept' };
  } finally {
    terminal.close();
  }
}

/** The client capability that goes with it: form elicitation, and links (URL mode). */
export const ELICITATION_CAPABILITY = { elicitation: { form: {}, url: {} } } as const;
