/**
 * The deadline of one upstream attempt: connect, headers and the whole body together.
 *
 * undici's `headersTimeout` and `bodyTimeout` bound each idle gap, not the attempt: a body trickling
 * one byte just inside the gap never times out (one byte every 400 ms held a read for 24 s with a 10 s
 * timeout). This signal fires when the attempt's time is up, with the reason the caller chose
 * (UPSTREAM_TIMEOUT), or when the caller's own signal fires (cancellation, the operation deadline),
 * with that signal's reason. undici aborts the call on it, before or after the headers.
 *
 * A plain EventTarget with AbortSignal's surface, as the operation deadline uses
 * (src/gateway/protection/deadline.ts): with the same listeners it costs ~2-3 µs per attempt against ~15 µs for
 * an AbortController on Node 20 (measured in a loop of 200k), and undici, node:timers/promises and the
 * concurrency gate only read `aborted`, `reason` and the `abort` event.
 */

/** Arms a deadline for one attempt. Always `dispose()` it when the attempt ends (clears the timer). */
export class AttemptDeadline extends EventTarget {
  aborted = false;
  reason: unknown = undefined;
  onabort: ((event: Event) => void) | null = null;
  readonly #timer: NodeJS.Timeout;
  readonly #parent: AbortSignal | undefined;
  readonly #forward = () => this.#abort(this.#parent?.reason);

  /**
   * @param parent the caller's signal; its abort is forwarded with its reason
   * @param timeoutMs the whole attempt's budget
   * @param timeoutReason builds the reason the deadline aborts with
   */
  constructor(parent: AbortSignal | undefined, timeoutMs: number, timeoutReason: () => unknown) {
    super();
    this.#parent = parent;
    this.#timer = setTimeout(() => this.#abort(timeoutReason()), timeoutMs);
    if (parent?.aborted) this.#forward();
    else parent?.addEventListener('abort', this.#forward, { once: true });
  }

  /** The object as the AbortSignal it stands in for. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal;
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /** Ends the deadline: clears the timer and stops listening to the caller's signal. Idempotent. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#parent?.removeEventListener('abort', this.#forward);
  }

  #abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.dispose();
    const event = new Event('abort');
    this.onabort?.(event);
    this.dispatchEvent(event);
  }
}
