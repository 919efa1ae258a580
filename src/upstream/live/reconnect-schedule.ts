/**
 * When a dropped shared socket tries again: exponential backoff with jitter, and the point
 * (`maxAttempts` failed attempts in a row) where it gives up, so its subscribers end with
 * CONVERSATION_UNREACHABLE instead of waiting forever. The timer is counted in the bridge's `timers`.
 */

/** The backoff of (re)connect attempts, every value given (the bridge's options fill in defaults). */
export interface ReconnectSettings {
  initialDelayMs: number;
  maxDelayMs: number;
  /** Consecutive failed attempts before giving up. */
  maxAttempts: number;
}

/**
 * The backoff with the defaults filled in: first retry after 100 ms, doubling to at most 2 s, giving
 * up after 8 failed attempts in a row. One place for both bridges (V0's Socket.IO, V1's WebSocket),
 * which take the same `live` settings.
 */
export function resolveReconnect(given: Partial<ReconnectSettings> | undefined): ReconnectSettings {
  return {
    initialDelayMs: given?.initialDelayMs ?? 100,
    maxDelayMs: given?.maxDelayMs ?? 2000,
    maxAttempts: given?.maxAttempts ?? 8,
  };
}

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
