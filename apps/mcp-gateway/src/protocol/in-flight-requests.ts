// The requests running now, so that a cancellation finds the one it names: on this replica, or
// (with a bus, the session store's pub/sub) on whichever replica runs it. Both transports use
// it; the client's notifications/cancelled and a client that goes away end up here.
import { Cancellation } from './cancellation.js';
import type { JsonRpcId } from './json-rpc.js';

/** Carries cancellations between replicas (the Redis session store does; the memory one is local). */
export interface CancelBus {
  publishCancel(sessionId: string, requestId: string): Promise<void>;
  onCancel(listener: (sessionId: string, requestId: string) => void): () => void;
}

// Ids are compared as strings, so a cancellation keeps its meaning when it crosses a replica.
const keyOf = (sessionId: string | undefined, requestId: JsonRpcId) => `${sessionId ?? '-'}:${String(requestId)}`;

export class InFlightRequests {
  readonly #running = new Map<string, Cancellation>();
  readonly #bus: CancelBus | undefined;
  readonly #unsubscribe: (() => void) | undefined;

  constructor(bus?: CancelBus) {
    this.#bus = bus;
    this.#unsubscribe = bus?.onCancel((sessionId, requestId) =>
      this.#running.get(keyOf(sessionId, requestId))?.abort(new Error('cancelled by the client')),
    );
  }

  has(sessionId: string | undefined, requestId: JsonRpcId): boolean {
    return this.#running.has(keyOf(sessionId, requestId));
  }

  /** Registers a request that starts now; its signal aborts when it is cancelled. */
  start(sessionId: string | undefined, requestId: JsonRpcId): Cancellation {
    const cancellation = new Cancellation();
    this.#running.set(keyOf(sessionId, requestId), cancellation);
    return cancellation;
  }

  finish(sessionId: string | undefined, requestId: JsonRpcId): void {
    this.#running.delete(keyOf(sessionId, requestId));
  }

  /** The client cancelled a request: it stops here, or on the replica that runs it. */
  async cancel(sessionId: string | undefined, requestId: JsonRpcId, reason: string): Promise<void> {
    if (this.#bus && sessionId !== undefined) {
      await this.#bus.publishCancel(sessionId, String(requestId));
      return;
    }
    this.#running.get(keyOf(sessionId, requestId))?.abort(new Error(reason));
  }

  /** Requests running now. */
  get size(): number {
    return this.#running.size;
  }

  /** Stops every request still running (the server or the input is closing). */
  abortAll(reason: string | Error): void {
    const error = typeof reason === 'string' ? new Error(reason) : reason;
    for (const cancellation of this.#running.values()) cancellation.abort(error);
  }

  close(): void {
    this.#unsubscribe?.();
  }
}
