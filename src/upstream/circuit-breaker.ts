/**
 * Resilience primitives for the upstream client: a circuit breaker (fail fast while the upstream is
 * down, let one probe through after a cool-down to find out whether it is back) and a bounded
 * concurrency gate (at most N calls in flight, a bounded queue behind them, waiting honours the
 * caller's AbortSignal). Both are per upstream origin: the client owns one of each.
 */

/** States of {@link CircuitBreaker}. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** Options of {@link CircuitBreaker}. */
export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. @default 5 */
  failureThreshold?: number;
  /** How long the circuit stays open before one probe call is let through. @default 5000 */
  resetTimeoutMs?: number;
  /** Clock, injectable for unit tests. @default Date.now */
  now?: () => number;
  /** Observer of state changes (log, metrics). */
  onStateChange?: (state: CircuitState) => void;
}

/** What {@link CircuitBreaker.admit} decided. */
export type Admission = { admitted: true; probe: boolean } | { admitted: false; retryAfterMs: number };

/**
 * An admission that is not a probe: what a closed circuit answers, and what the client uses without a
 * breaker. Shared, as the probe's is: admit() runs once per upstream attempt and these carry nothing.
 */
export const ADMITTED: Admission = Object.freeze({ admitted: true, probe: false });
const PROBE: Admission = Object.freeze({ admitted: true, probe: true });

/**
 * Counts consecutive failures of calls that reached the upstream. Only failures that say "the
 * upstream is unwell" count (connection errors, timeouts, 5xx); a 4xx answer is a healthy upstream.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #resetMs: number;
  readonly #now: () => number;
  readonly #onStateChange: CircuitBreakerOptions['onStateChange'];
  #state: CircuitState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #probeInFlight = false;

  constructor(options: CircuitBreakerOptions = {}) {
    this.#threshold = options.failureThreshold ?? 5;
    this.#resetMs = options.resetTimeoutMs ?? 5000;
    this.#now = options.now ?? Date.now;
    this.#onStateChange = options.onStateChange;
  }

  /** Current state (an open circuit past its cool-down reports `half-open`). */
  get state(): CircuitState {
    if (this.#state === 'open' && this.#now() - this.#openedAt >= this.#resetMs) return 'half-open';
    return this.#state;
  }

  /**
   * Asks to send one call. While open, refuses with the time left; once the cool-down has passed,
   * admits exactly one probe and refuses the rest until the probe reports.
   */
  admit(): Admission {
    if (this.#state === 'closed') return ADMITTED;
    const waited = this.#now() - this.#openedAt;
    if (this.#state === 'open' && waited < this.#resetMs) {
      return { admitted: false, retryAfterMs: this.#resetMs - waited };
    }
    if (this.#probeInFlight) return { admitted: false, retryAfterMs: Math.max(1, this.#resetMs) };
    this.#probeInFlight = true;
    this.#setState('half-open');
    return PROBE;
  }

  /** Reports the outcome of an admitted call. `probe` is what `admit` said. */
  record(outcome: 'success' | 'failure' | 'neutral', probe: boolean): void {
    if (probe) this.#probeInFlight = false;
    if (outcome === 'success') {
      this.#failures = 0;
      this.#setState('closed');
      return;
    }
    if (outcome === 'neutral') {
      // A cancelled probe says nothing about the upstream; the next caller probes again.
      return;
    }
    this.#failures++;
    if (probe || this.#failures >= this.#threshold) {
      this.#openedAt = this.#now();
      this.#setState('open');
    }
  }

  #setState(state: CircuitState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#onStateChange?.(state);
  }
}

/** Options of {@link ConcurrencyGate}. */
export interface ConcurrencyGateOptions {
  /** Calls in flight at once. @default 64 */
  maxConcurrent?: number;
  /** Calls allowed to wait for a slot; more are refused at once. @default 1000 */
  maxQueued?: number;
}

/** Why {@link ConcurrencyGate.acquire} failed. */
export class GateRefusal extends Error {
  constructor(readonly reason: 'queue-full' | 'aborted') {
    super(reason === 'queue-full' ? 'too many calls waiting' : 'aborted while waiting');
    this.name = 'GateRefusal';
  }
}

/**
 * A counting semaphore with a bounded FIFO queue. Every slot taken ({@link tryAcquire} answering true,
 * or {@link acquire} resolving) is given back with exactly one {@link release}.
 */
export class ConcurrencyGate {
  readonly #max: number;
  readonly #maxQueued: number;
  /** Waiting calls, each woken by being handed a slot. */
  readonly #queue: Array<() => void> = [];
  #active = 0;

  constructor(options: ConcurrencyGateOptions = {}) {
    this.#max = options.maxConcurrent ?? 64;
    this.#maxQueued = options.maxQueued ?? 1000;
  }

  /** Calls holding a slot. */
  get active(): number {
    return this.#active;
  }

  /** Calls waiting for a slot. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Takes a free slot at once, without a promise (the common case of every upstream call); false when
   * none is free or `signal` has aborted, and then {@link acquire} waits or refuses as it should.
   * A free slot means nobody is queued: {@link release} hands a slot to a waiter before freeing it.
   */
  tryAcquire(signal?: AbortSignal): boolean {
    if (signal?.aborted || this.#active >= this.#max) return false;
    this.#active++;
    return true;
  }

  /**
   * Waits for a slot, queued behind the calls already waiting.
   * @throws GateRefusal `queue-full` when the queue is full, `aborted` when `signal` fires first
   */
  async acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw new GateRefusal('aborted');
    if (this.tryAcquire()) return;
    if (this.#queue.length >= this.#maxQueued) throw new GateRefusal('queue-full');
    // The slot is handed over by release() (active is not decremented), so no increment here.
    await new Promise<void>((resolve, reject) => {
      const waiter = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        reject(new GateRefusal('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  /** Gives a slot back: to the first waiter if any (it keeps `active` as is), else frees it. */
  release(): void {
    const next = this.#queue.shift();
    if (next) next();
    else this.#active--;
  }
}
