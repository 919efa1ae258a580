/**
 * A cap on the long-lived connections (graphql-ws sockets plus SSE streams) one credential holds at
 * once. Each socket may carry up to WS_MAX_SUBSCRIPTIONS_PER_SOCKET operations, but without this one
 * caller could open sockets and streams without end, each holding a file descriptor, buffers and
 * upstream event subscriptions. Counts are keyed by a salted sha256 of the credential, never the
 * secret itself, so this map holds nothing worth stealing and nothing here can log a key.
 */

import { randomBytes } from 'node:crypto';
import type { RefusalCode } from '../../errors.ts';
import { credentialKey } from '../../upstream/credential-key.ts';
import type { UpstreamCredentials } from '../../upstream/credentials.ts';

/** Default of `MAX_STREAMS_PER_CREDENTIAL`: far above one user's tabs and apps, far below a flood. */
export const DEFAULT_MAX_STREAMS_PER_CREDENTIAL = 100;

/** Code of a refused socket or stream (HTTP 429 for SSE, close code {@link TOO_MANY_STREAMS_CLOSE_CODE}). */
export const TOO_MANY_STREAMS = 'TOO_MANY_STREAMS' satisfies RefusalCode;

/**
 * graphql-ws close code of a socket refused at `connection_init` for this cap: 4429 as in HTTP 429.
 * graphql-ws clients treat it as fatal (no automatic reconnect loop against a full quota).
 */
export const TOO_MANY_STREAMS_CLOSE_CODE = 4429;

/** The release function when the cap is off: one for all connections, not a closure per socket. */
const releaseNothing = (): void => {};

/** Open-connection counts by hashed credential. */
export class StreamQuota {
  readonly #max: number;
  readonly #open = new Map<string, number>();
  /** Per-process salt: hashes cannot be matched against known keys elsewhere. */
  readonly #salt = randomBytes(16).toString('hex');

  /** @param max connections per credential; 0 turns the cap off. */
  constructor(max: number) {
    this.#max = max;
  }

  /** The cap (0 = off). */
  get max(): number {
    return this.#max;
  }

  /** Credentials currently holding at least one connection. */
  get size(): number {
    return this.#open.size;
  }

  /** Connections open under `credentials` (tests, diagnostics). */
  openFor(credentials: UpstreamCredentials): number {
    return this.#open.get(this.#keyOf(credentials)) ?? 0;
  }

  /**
   * Takes a slot for one connection. Returns its release function (idempotent), or null when the
   * credential already holds `max` connections. Callers without a credential share one count.
   */
  acquire(credentials: UpstreamCredentials): (() => void) | null {
    if (this.#max === 0) return releaseNothing;
    const key = this.#keyOf(credentials);
    const open = this.#open.get(key) ?? 0;
    if (open >= this.#max) return null;
    this.#open.set(key, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(key) ?? 1) - 1;
      if (left <= 0) this.#open.delete(key);
      else this.#open.set(key, left);
    };
  }

  #keyOf(credentials: UpstreamCredentials): string {
    return credentialKey(credentials, this.#salt);
  }
}
