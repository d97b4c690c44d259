// Requests the server sends a client of a session (elicitation/create: a person's approval before
// a destructive call), and the client's answers matched back to them by id. A question waits in
// the process that asked it. Over HTTP behind a balancer without stickiness the answer, a new
// POST, may reach another replica: with a bus (the Redis session store) that replica hands it to
// the one that asked, whose name the question's id carries. A 2026-07-28 client needs none of
// this: it answers an input_required result instead, which any replica takes.
import { INVALID_REQUEST, type JsonRpcNotification } from './json-rpc.js';

/** The most questions awaiting an answer at once in one process; past it a new one is refused. */
export const MAX_PENDING_CLIENT_REQUESTS = 1000;

/** The largest answer handed from one replica to another (serialized); a larger one arrives as an error. */
export const MAX_RELAYED_ANSWER_BYTES = 64 * 1024;

/** Carries a client's answer to the replica that asked (the Redis session store does). */
export interface AnswerBus {
  /** This replica's name on the bus, 12 URL-safe characters; '' when there are no others to reach. */
  readonly replica: string;
  /** Resolves with how many replicas heard it (0 or 1: only the one named listens). */
  publishAnswer(replica: string, scope: string, response: Record<string, unknown>): Promise<number>;
  onAnswer(listener: (scope: string, response: Record<string, unknown>) => void): () => void;
}

/** The id of a question asked by a replica on a bus: `agentwire-<replica>-<n>`. */
const ASKED_BY = /^agentwire-([A-Za-z0-9_-]{12})-\d{1,15}$/;

/** The client answered a server request with a JSON-RPC error. */
export class ClientRequestError extends Error {
  override readonly name = 'ClientRequestError';
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

export class ClientRequests {
  readonly #pending = new Map<string, Pending>();
  #next = 0;
  readonly #bus: AnswerBus | undefined;
  readonly #idPrefix: string;
  readonly #unsubscribe: (() => void) | undefined;

  constructor(bus?: AnswerBus) {
    this.#bus = bus?.replica ? bus : undefined;
    this.#idPrefix = this.#bus ? `agentwire-${this.#bus.replica}-` : 'agentwire-';
    this.#unsubscribe = this.#bus?.onAnswer((scope, response) => {
      this.settle(scope, response);
    });
  }

  /**
   * Sends `method` to the client of `scope` (a session id; '' over stdio) through `send`, and
   * resolves with its result; rejects with its error, or when `signal` aborts.
   */
  ask(
    scope: string,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    send: (message: JsonRpcNotification & { id: string }) => void,
  ): Promise<unknown> {
    if (this.#pending.size >= MAX_PENDING_CLIENT_REQUESTS) {
      return Promise.reject(
        new Error(`${MAX_PENDING_CLIENT_REQUESTS} questions to clients await an answer already (the most at once)`),
      );
    }
    const id = `${this.#idPrefix}${++this.#next}`;
    const key = `${scope}\0${id}`;
    return new Promise((resolve, reject) => {
      const done = () => {
        this.#pending.delete(key);
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        done();
        reject(signal.reason instanceof Error ? signal.reason : new Error('the question was abandoned'));
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(key, {
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /**
   * A response from the client of `scope`: settles the question here (`settled`), or hands it to
   * the replica that asked it (`relayed`, or `unheard` when no replica of that name listens: it
   * is gone, or reconnecting). One that answers no question of any replica is `dropped`.
   */
  async answer(
    scope: string,
    response: Record<string, unknown>,
  ): Promise<'settled' | 'relayed' | 'unheard' | 'dropped'> {
    if (this.settle(scope, response)) return 'settled';
    const asker = ASKED_BY.exec(String(response.id))?.[1];
    if (!this.#bus || asker === undefined || asker === this.#bus.replica) return 'dropped';
    return (await this.#bus.publishAnswer(asker, scope, relayed(response))) > 0 ? 'relayed' : 'unheard';
  }

  /** Stops hearing answers relayed from other replicas. */
  close(): void {
    this.#unsubscribe?.();
  }

  /** A response from the client of `scope`: settles the question it answers; false when it answers none. */
  settle(scope: string, response: Record<string, unknown>): boolean {
    const pending = this.#pending.get(`${scope}\0${String(response.id)}`);
    if (!pending) return false;
    if (response.error !== undefined) {
      const { code, message } = errorOf(response.error);
      pending.reject(new ClientRequestError(code, message));
    } else pending.resolve(response.result);
    return true;
  }
}

/** An answer's error, whatever the client sent as one (null, a string, an object of anything). */
function errorOf(error: unknown): { code: number; message: string } {
  const e = typeof error === 'object' && error !== null ? (error as { code?: unknown; message?: unknown }) : {};
  return {
    code: typeof e.code === 'number' && Number.isSafeInteger(e.code) ? e.code : 0,
    message: typeof e.message === 'string' ? e.message.slice(0, 300) : 'no message',
  };
}

/** What crosses to the asking replica: the id and the result or error, within MAX_RELAYED_ANSWER_BYTES. */
function relayed(response: Record<string, unknown>): Record<string, unknown> {
  const answer =
    response.error !== undefined
      ? { id: response.id, error: errorOf(response.error) }
      : { id: response.id, result: response.result };
  if (Buffer.byteLength(JSON.stringify(answer)) <= MAX_RELAYED_ANSWER_BYTES) return answer;
  return {
    id: response.id,
    error: {
      code: INVALID_REQUEST,
      message: `the answer was larger than ${MAX_RELAYED_ANSWER_BYTES} bytes, the most handed between gateway replicas`,
    },
  };
}
