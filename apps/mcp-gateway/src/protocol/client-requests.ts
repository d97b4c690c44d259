// Requests the server sends a client of a session (elicitation/create: a person's approval before
// a destructive call), and the client's answers matched back to them by id. They live in this
// process: the answer must come back to the replica that asked (stdio has one; over HTTP the
// balancer keeps a session on one replica, or the question goes unanswered and the call is not
// made). A 2026-07-28 client needs none of this: it answers an input_required result instead.
import type { JsonRpcNotification } from './json-rpc.js';

/** The most questions awaiting an answer at once in one process; past it a new one is refused. */
export const MAX_PENDING_CLIENT_REQUESTS = 1000;

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
    const id = `agentwire-${++this.#next}`;
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

  /** A response from the client of `scope`: settles the question it answers; false when it answers none. */
  settle(scope: string, response: Record<string, unknown>): boolean {
    const pending = this.#pending.get(`${scope}\0${String(response.id)}`);
    if (!pending) return false;
    const error = response.error as { code?: unknown; message?: unknown } | undefined;
    if (error !== undefined) {
      pending.reject(
        new ClientRequestError(
          typeof error.code === 'number' ? error.code : 0,
          typeof error.message === 'string' ? error.message.slice(0, 300) : 'no message',
        ),
      );
    } else pending.resolve(response.result);
    return true;
  }
}
