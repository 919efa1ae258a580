/**
 * Per-credential concurrency of upstream calls. The pool (UPSTREAM_CONNECTIONS) and its queue are
 * shared by every caller; without a per-caller bound one operation fanning out (a 100-id `nodes`, in a
 * loop) fills both, and another tenant's one-call list waits behind all of it. Here each credential
 * may have at most `perCredential` calls past this point; its further calls wait in its own queue
 * (at most `maxWaiting`, then refused), so the shared pool and queue always keep room for others.
 *
 * Credentials are keyed by a salted SHA-256 (never the key itself: this map outlives operations).
 */
import { randomBytes } from 'node:crypto';
import { credentialKey } from './credential-key.ts';
import type { UpstreamCredentials } from './credentials.ts';

/** Why a call was not run: its signal aborted while waiting, or its credential's queue is full. */
export type FairShareRefusal = 'aborted' | 'queue-full';

interface Lane {
  active: number;
  waiting: Array<() => void>;
}

/** Bounds the upstream calls in flight per credential. */
export class FairShare {
  readonly #perCredential: number;
  readonly #maxWaiting: number;
  readonly #lanes = new Map<string, Lane>();
  /** Hash per credentials object: one operation's calls share the object, so it is hashed once. */
  readonly #keys = new WeakMap<UpstreamCredentials, string>();
  readonly #salt = randomBytes(16).toString('hex');

  /**
   * @param perCredential calls in flight per credential (at least 1)
   * @param maxWaiting calls one credential may have waiting; more are refused at once
   */
  constructor(perCredential: number, maxWaiting: number) {
    this.#perCredential = Math.max(1, perCredential);
    this.#maxWaiting = maxWaiting;
  }

  /** Credentials with calls in flight or waiting (tests, metrics). */
  get lanes(): number {
    return this.#lanes.size;
  }

  /**
   * Runs `call` once this credential has a free slot. A full queue, or an abort of `signal` while
   * waiting, rejects with `refusal(reason)` without running `call`.
   */
  async run<T>(
    credentials: UpstreamCredentials,
    signal: AbortSignal | undefined,
    call: () => Promise<T>,
    refusal: (reason: FairShareRefusal) => Error,
  ): Promise<T> {
    const key = this.#keyOf(credentials);
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { active: 0, waiting: [] };
      this.#lanes.set(key, lane);
    }
    // A waiter is handed the finishing call's slot (`active` unchanged), so a newcomer arriving
    // between the hand-over and the waiter's wake-up cannot take it too.
    if (lane.active >= this.#perCredential) {
      if (lane.waiting.length >= this.#maxWaiting) throw refusal('queue-full');
      await this.#wait(lane, signal, () => refusal('aborted'));
    } else lane.active++;
    try {
      return await call();
    } finally {
      const next = lane.waiting.shift();
      if (next) next();
      else if (--lane.active === 0) this.#lanes.delete(key);
    }
  }

  #wait(lane: Lane, signal: AbortSignal | undefined, abortError: () => Error): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError());
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = lane.waiting.indexOf(admit);
        if (index >= 0) lane.waiting.splice(index, 1);
        reject(abortError());
      };
      const admit = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      lane.waiting.push(admit);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #keyOf(credentials: UpstreamCredentials): string {
    let key = this.#keys.get(credentials);
    if (key === undefined) {
      key = credentialKey(credentials, this.#salt);
      this.#keys.set(credentials, key);
    }
    return key;
  }
}
