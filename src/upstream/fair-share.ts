/**
 * Per-credential concurrency of upstream calls. The pool (UPSTREAM_CONNECTIONS) and its queue are
 * shared by every caller; without a per-caller bound one operation fanning out (a 100-id `nodes`, in a
 * loop) fills both, and another tenant's one-call list waits behind all of it. Here each credential
 * may have at most `perCredential` calls past this point; its further calls wait in its own queue
 * (at most `maxWaiting`, then refused), so the shared pool and queue always keep room for others.
 *
 * Lanes are keyed by the credential's kind and secret themselves, not by a salted hash
 * (credential-key.ts) as the maps that outlive calls are: a lane exists only while its credential has
 * calls in flight or waiting (it is deleted with the last one), and each of those calls holds the same
 * secret in its own request and headers for as long, so the key keeps no secret in memory longer than
 * the calls do, and is never logged or counted (`lanes` is a number). A hash was a sha256 per
 * operation (the credentials object, which cached it, is made per request) for a lookup of a few
 * microseconds' lifetime; a cache of hashes by secret would have kept every caller's secret for good.
 */
import { credentialSecret, type UpstreamCredentials } from './credentials.ts';

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
  /** Lanes by secret, one map per kind (the same string under two kinds is two credentials). */
  readonly #lanes: Record<UpstreamCredentials['kind'], Map<string, Lane>> = {
    'session-api-key': new Map(),
    bearer: new Map(),
    'access-token': new Map(),
    none: new Map(),
  };

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
    let lanes = 0;
    for (const byKind of Object.values(this.#lanes)) lanes += byKind.size;
    return lanes;
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
    const lanes = this.#lanes[credentials.kind];
    // Callers without a credential share one lane ('' is what credentialSecret answers for them).
    const key = credentialSecret(credentials);
    let lane = lanes.get(key);
    if (!lane) {
      lane = { active: 0, waiting: [] };
      lanes.set(key, lane);
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
      else if (--lane.active === 0) lanes.delete(key);
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
}
