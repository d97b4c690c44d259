// Links a server needs its user to open before a call can run (URL mode elicitation: connecting
// an account at a third party, the gateway's identity: connect). On 2026-07-28 they come as an
// input request, answered by the elicitation handler (elicitation.ts) and sent back by the SDK.
// On 2025-11-25 the call fails with -32042 and the links; the server says each one is done with
// notifications/elicitation/complete on the session's stream. Here: the links are shown (the
// person opens them), the completions awaited, and the call is sent again, once. It is safe to
// send again: a -32042 means the server ran nothing.
import { openLinkAtTerminal } from '../elicitation.js';
import { shownLine } from '../terminal-text.js';
import { TaskError } from './backend.js';

const URL_ELICITATION_REQUIRED = -32042;
/** Completions heard before anyone waited for them, kept this many at most. */
const MAX_EARLY = 100;
/** How long a link may take without a deadline to bound it. */
export const DEFAULT_LINK_WAIT_MS = 300_000;

interface Link {
  elicitationId: string;
  url: string;
  message: string;
}

/** The notifications/elicitation/complete a client has heard, and the calls waiting for them. */
export class LinkCompletions {
  readonly #early = new Set<string>();
  readonly #waiting = new Map<string, () => void>();

  complete(elicitationId: string): void {
    const waiter = this.#waiting.get(elicitationId);
    if (waiter) {
      this.#waiting.delete(elicitationId);
      waiter();
      return;
    }
    if (this.#early.size >= MAX_EARLY) this.#early.delete(this.#early.values().next().value as string);
    this.#early.add(elicitationId);
  }

  /** Resolves true once the server says the link was used, false after `ms`. */
  wait(elicitationId: string, ms: number): Promise<boolean> {
    if (this.#early.delete(elicitationId)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(elicitationId);
        resolve(false);
      }, ms);
      this.#waiting.set(elicitationId, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

/** The links of a -32042 error, or undefined for any other error. */
export function linksOf(error: unknown): Link[] | undefined {
  const { code, data } = (error ?? {}) as { code?: unknown; data?: { elicitations?: unknown } };
  if (code !== URL_ELICITATION_REQUIRED || !Array.isArray(data?.elicitations)) return undefined;
  return (data.elicitations as Array<Record<string, unknown>>)
    .filter((e) => e.mode === 'url' && typeof e.url === 'string' && typeof e.elicitationId === 'string')
    .map((e) => ({ elicitationId: String(e.elicitationId), url: String(e.url), message: String(e.message ?? '') }));
}

/** A call; when it needs links opened first (-32042), they are shown, awaited, and the call sent again once. */
export async function afterLinks<T>(
  name: string,
  call: () => Promise<T>,
  completions: LinkCompletions,
  waitMs: number,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const links = linksOf(error);
    if (!links || links.length === 0) throw error;
    // Listened for before the person is asked: the completion may come while they answer.
    const used = links.map((link) => completions.wait(link.elicitationId, waitMs));
    for (const link of links) {
      const answer = await openLinkAtTerminal(link.message, link.url);
      if (answer.action !== 'accept') {
        throw new TaskError(
          `${name}: the server needs a link opened first (${shownLine(link.url)}); declined, nothing was run`,
          {
            refused: true,
          },
        );
      }
    }
    if (!(await Promise.all(used)).every(Boolean)) {
      throw new TaskError(
        `${name}: the link was not used within ${Math.round(waitMs / 1000)} s (the server never said it was done); nothing was run`,
      );
    }
    return await call();
  }
}
