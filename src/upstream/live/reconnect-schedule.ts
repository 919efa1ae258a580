/**
 * When a dropped shared socket tries again: exponential backoff with jitter, and the point
 * (`maxAttempts` failed attempts in a row) where it gives up, so its subscribers end with
 * CONVERSATION_UNREACHABLE instead of waiting forever. The timer is counted in the registry's `timers`.
 */

import type { ReconnectSettings } from './live-options.ts';

export class ReconnectSchedule {
  readonly #settings: ReconnectSettings;
  readonly #counters: { timers: number };
  #failedAttempts = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(settings: ReconnectSettings, counters: { timers: number }) {
    this.#settings = settings;
    this.#counters = counters;
  }

  /** Counts a failed attempt and schedules `connect`; false, with nothing scheduled, once attempts run out. */
  retry(connect: () => void): boolean {
    this.#failedAttempts++;
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.#settings;
    if (this.#failedAttempts > maxAttempts) return false;
    const base = Math.min(maxDelayMs, initialDelayMs * 2 ** (this.#failedAttempts - 1));
    // Jitter spreads the reconnects of many conversations after an upstream restart.
    const delay = base / 2 + Math.random() * (base / 2);
    this.#counters.timers++;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#counters.timers--;
      connect();
    }, delay);
    return true;
  }

  /** A connection was acknowledged: the next failure starts the backoff over. */
  succeeded(): void {
    this.#failedAttempts = 0;
  }

  /** The socket closed: no further attempt. */
  cancel(): void {
    if (!this.#timer) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#counters.timers--;
  }
}
