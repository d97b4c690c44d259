// Questions to a session's client (elicitation/create) and their answers across replicas: an
// answer that reaches a replica that did not ask goes, through Redis, to the one that did (its
// name is in the question's id); a larger one than the bus takes arrives as an error that says
// so; an answer to nobody's question is dropped. Two real Redis session stores are the bus.
import { afterEach, describe, expect, it } from 'vitest';
import { ClientRequests, MAX_RELAYED_ANSWER_BYTES } from '../src/protocol/client-requests.js';
import { createSessionStore } from '../src/sessions/create-session-store.js';
import type { SessionBackend } from '../src/sessions/session-store.js';

const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()?.();
});

async function replicas() {
  const prefix = `questions-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
  const stores: SessionBackend[] = [];
  for (let i = 0; i < 2; i++) {
    const store = await createSessionStore({ redisUrl: process.env.REDIS_URL, redisPrefix: prefix });
    await store.subscribed();
    closing.push(() => store.close());
    stores.push(store);
  }
  const [a, b] = stores.map((store) => {
    const questions = new ClientRequests(store);
    closing.push(() => questions.close());
    return questions;
  }) as [ClientRequests, ClientRequests];
  return { a, b, names: stores.map((s) => s.replica) };
}

/** Asks on `questions` and returns the question's id (as the client would see it) and its outcome. */
function ask(questions: ClientRequests, scope: string) {
  let id = '';
  const outcome = questions.ask(scope, 'elicitation/create', {}, new AbortController().signal, (message) => {
    id = message.id;
  });
  // Heard now: a relayed answer may settle it before the test awaits it.
  outcome.catch(() => undefined);
  return { id, outcome };
}

describe('answers to questions asked by another replica', () => {
  it('reach the replica that asked, for the session that asked, named in the id', async () => {
    const { a, b, names } = await replicas();
    const asked = ask(a, 'session-1');
    expect(asked.id).toBe(`agentwire-${names[0]}-1`);
    expect(await b.answer('session-1', { jsonrpc: '2.0', id: asked.id, result: { action: 'accept' } })).toBe('relayed');
    await expect(asked.outcome).resolves.toEqual({ action: 'accept' });

    const refused = ask(a, 'session-1');
    await b.answer('session-1', { jsonrpc: '2.0', id: refused.id, error: { code: -1, message: 'no thanks' } });
    await expect(refused.outcome).rejects.toThrow('no thanks');

    // An error that is no object (null, a string) is an error all the same, here and across.
    for (const error of [null, 'nope']) {
      const odd = ask(a, 'session-1');
      await b.answer('session-1', { jsonrpc: '2.0', id: odd.id, error });
      await expect(odd.outcome).rejects.toMatchObject({ code: 0, message: 'no message' });
      const here = ask(a, 'session-1');
      expect(await a.answer('session-1', { jsonrpc: '2.0', id: here.id, error })).toBe('settled');
      await expect(here.outcome).rejects.toMatchObject({ code: 0, message: 'no message' });
    }
  });

  it('arrive as an error past MAX_RELAYED_ANSWER_BYTES, and answer nothing for another session', async () => {
    const { a, b } = await replicas();
    const asked = ask(a, 'session-1');
    // The same id from another session settles nothing (it would have been dropped by now).
    await b.answer('session-2', { jsonrpc: '2.0', id: asked.id, result: { action: 'accept' } });
    // Counted in bytes: a third of the cap in three-byte characters is over it.
    const large = { action: 'accept', content: { note: '€'.repeat(Math.ceil(MAX_RELAYED_ANSWER_BYTES / 3)) } };
    await b.answer('session-1', { jsonrpc: '2.0', id: asked.id, result: large });
    await expect(asked.outcome).rejects.toThrow(
      `the answer was larger than ${MAX_RELAYED_ANSWER_BYTES} bytes, the most handed between gateway replicas`,
    );
  });

  it('are dropped when no replica can have asked them (this one, or no name), and unheard when none listens by that name', async () => {
    const { a, b, names } = await replicas();
    const asked = ask(a, 'session-1');
    // No replica has that name: published, heard by none.
    expect(await b.answer('session-1', { jsonrpc: '2.0', id: `agentwire-${'Z'.repeat(12)}-1`, result: {} })).toBe(
      'unheard',
    );
    // This replica's own name, or none: nobody to hand it to.
    for (const id of [`agentwire-${names[1]}-1`, 'agentwire-1', 7]) {
      expect(await b.answer('session-1', { jsonrpc: '2.0', id, result: {} })).toBe('dropped');
    }
    // The real question still waits, and takes its own answer.
    await b.answer('session-1', { jsonrpc: '2.0', id: asked.id, result: { action: 'decline' } });
    await expect(asked.outcome).resolves.toEqual({ action: 'decline' });
  });
});
