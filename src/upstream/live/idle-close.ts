/**
 * Closing a shared socket once nobody uses it: `idleCloseMs` after the last subscriber or waiting
 * action leaves (shared-socket.ts), unless one arrives meanwhile. The timer is counted in the
 * registry's `timers`, so a test can see that an idle registry holds none.
 */
export class IdleClose {
  readonly #delayMs: number;
  readonly #counters: { timers: number };
  readonly #isIdle: () => boolean;
  readonly #close: () => void;
  #timer: NodeJS.Timeout | null = null;

  /**
   * @param isIdle whether the socket has no subscriber, no action and is not closed yet
   * @param close closes the socket (called only when it is still idle when the delay is over)
   */
  constructor(delayMs: number, counters: { timers: number }, isIdle: () => boolean, close: () => void) {
    this.#delayMs = delayMs;
    this.#counters = counters;
    this.#isIdle = isIdle;
    this.#close = close;
  }

  /** Starts the delay when the socket is idle and no delay runs yet. */
  arm(): void {
    if (this.#timer || !this.#isIdle()) return;
    this.#counters.timers++;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#counters.timers--;
      if (this.#isIdle()) this.#close();
    }, this.#delayMs);
  }

  /** Someone uses the socket again, or it closes: no idle close. */
  cancel(): void {
    if (!this.#timer) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#counters.timers--;
  }
}
