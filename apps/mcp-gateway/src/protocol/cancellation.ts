// A cancellation for one request that its readers take as an AbortSignal: `aborted`, `reason`,
// 'abort' events, `throwIfAborted()`. On Node 20 an AbortController costs 8 to 20 µs to make
// (its signal is a slow object), and the HTTP transport made two per tool call: a profile under
// load showed them as the largest cost of ours per call. An EventTarget with these fields is
// what our core, the http-client, undici and node:timers/promises read of a signal.
export class Cancellation extends EventTarget {
  aborted = false;
  reason: unknown = undefined;
  onabort: ((event: Event) => void) | null = null;

  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const event = new Event('abort');
    this.onabort?.(event);
    this.dispatchEvent(event);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /** This object, typed as the AbortSignal it stands in for. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal;
  }
}
