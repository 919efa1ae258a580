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

/** Why a call was not admitted: its signal aborted while waiting, or its credential's queue is full. */
export type FairShareRefusal = 'aborted' | 'queue-full';

/** One credential's calls in flight and waiting; what a caller holds while it has a slot. */
export interface Lane {
  readonly kind: UpstreamCredentials['kind'];
  readonly key: string;
  active: number;
  waiting: Array<() => void>;
}

/**
 * Bounds the upstream calls in flight per credential. A slot is taken with {@link tryEnter} (at once,
 * when there is room) or {@link enter} (waiting in the credential's queue), and given back with
 * exactly one {@link leave} of the lane they answered.
 */
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
   * Takes a slot of this credential at once, without a promise (the common case of every upstream
   * call): the lane to {@link leave}, or null when its slots are all taken (then {@link enter} waits or
   * refuses). A free slot means nobody of this credential waits: {@link leave} hands a slot to a
   * waiter before freeing it.
   */
  tryEnter(credentials: UpstreamCredentials): Lane | null {
    const lane = this.#lane(credentials);
    return this.#take(lane) ? lane : null;
  }

  /**
   * Takes a slot of this credential, waiting behind its calls already waiting. A full queue, or an
   * abort of `signal` while waiting, rejects with `refusal(reason)` without taking one.
   */
  async enter(
    credentials: UpstreamCredentials,
    signal: AbortSignal | undefined,
    refusal: (reason: FairShareRefusal) => Error,
  ): Promise<Lane> {
    const lane = this.#lane(credentials);
    if (this.#take(lane)) return lane;
    if (lane.waiting.length >= this.#maxWaiting) throw refusal('queue-full');
    // A waiter is handed the leaving call's slot (`active` unchanged), so a newcomer arriving
    // between the hand-over and the waiter's wake-up cannot take it too.
    await this.#wait(lane, signal, () => refusal('aborted'));
    return lane;
  }

  /** Gives back the slot taken on `lane`: to its first waiter if any, else frees it. */
  leave(lane: Lane): void {
    const next = lane.waiting.shift();
    if (next) next();
    else if (--lane.active === 0) this.#lanes[lane.kind].delete(lane.key);
  }

  /** Takes a free slot of `lane`, if it has one. */
  #take(lane: Lane): boolean {
    if (lane.active >= this.#perCredential) return false;
    lane.active++;
    return true;
  }

  /** This credential's lane, made when it has none (and then taken at once: it is kept only while used). */
  #lane(credentials: UpstreamCredentials): Lane {
    const lanes = this.#lanes[credentials.kind];
    // Callers without a credential share one lane ('' is what credentialSecret answers for them).
    const key = credentialSecret(credentials);
    let lane = lanes.get(key);
    if (!lane) {
      lane = { kind: credentials.kind, key, active: 0, waiting: [] };
      lanes.set(key, lane);
    }
    return lane;
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
