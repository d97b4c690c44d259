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
    await b.answer('session-1', { jsonrpc: '2.0', id: asked.id, result: { action: 'accept' } });
    await expect(asked.outcome).resolves.toEqual({ action: 'accept' });

    const refused = ask(a, 'session-1');
    await b.answer('session-1', { jsonrpc: '2.0', id: refused.id, error: { code: -1, message: 'no thanks' } });
    await expect(refused.outcome).rejects.toThrow('no thanks');
  });

  it('arrive as an error past MAX_RELAYED_ANSWER_BYTES, and answer nothing for another session', async () => {
    const { a, b } = await replicas();
    const asked = ask(a, 'session-1');
    // The same id from another session settles nothing (it would have been dropped by now).
    await b.answer('session-2', { jsonrpc: '2.0', id: asked.id, result: { action: 'accept' } });
    const large = { action: 'accept', content: { note: 'x'.repeat(MAX_RELAYED_ANSWER_BYTES) } };
    await b.answer('session-1', { jsonrpc: '2.0', id: asked.id, result: large });
    await expect(asked.outcome).rejects.toThrow(
      `the answer was larger than ${MAX_RELAYED_ANSWER_BYTES} bytes, the most handed between gateway replicas`,
    );
  });

  it('are dropped when no replica asked them: an unknown name, or this one, or no name at all', async () => {
    const { a, b, names } = await replicas();
    const asked = ask(a, 'session-1');
    for (const id of [`agentwire-${'Z'.repeat(12)}-1`, `agentwire-${names[1]}-1`, 'agentwire-1', 7]) {
      await expect(b.answer('session-1', { jsonrpc: '2.0', id, result: {} })).resolves.toBeUndefined();
    }
    // The real question still waits, and takes its own answer.
    await b.answer('session-1', { jsonrpc: '2.0', id: asked.id, result: { action: 'decline' } });
    await expect(asked.outcome).resolves.toEqual({ action: 'decline' });
  });
});
