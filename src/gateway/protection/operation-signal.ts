/**
 * An AbortSignal without AbortController: the deadline's signal per operation (deadline.ts) and the
 * fast path's request signal (http-fast-path.ts).
 */
import { setMaxListeners } from 'node:events';

/**
 * An abort signal fired by its owner (a client that went away, a deadline). A plain
 * EventTarget with AbortSignal's surface (`aborted`, `reason`, `throwIfAborted`, the `abort` event),
 * which is what undici, node:timers/promises and the concurrency gate check for. Why not an
 * AbortController: on Node 20 creating its signal costs ~5% of the gateway's CPU per list request
 * (`createAbortSignal` in the profile); @whatwg-node/server uses the same kind of object for the
 * request signal.
 */
export class OperationSignal extends EventTarget {
  aborted = false;
  reason: unknown = undefined;
  onabort: ((event: Event) => void) | null = null;

  constructor() {
    super();
    // Every upstream call of the operation listens (nodes(ids:) runs 20 at once). Node's AbortSignal
    // never warns about that; a plain EventTarget would print MaxListenersExceededWarning past 10.
    setMaxListeners(0, this);
  }

  /** Fires once; later calls are ignored, like AbortController.abort. */
  abort(reason: unknown): void {
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

  /** The same object, typed as what the call scope carries (it is structurally one for every consumer). */
  asAbortSignal(): AbortSignal {
    return this as unknown as AbortSignal;
  }
}
