/**
 * The real server's per-client-IP rate limit, reproduced so a gateway can be tested against it:
 * more than `delayAbove` requests in the last window are held back `delayMs` before being served,
 * more than `rejectAbove` are answered 429 `{"message":"Too many requests"}` with `Retry-After: 1`.
 */

/** What to do with a request. */
type RateDecision =
  | { action: 'allow' }
  | { action: 'delay'; ms: number }
  | { action: 'reject'; retryAfterSeconds: number };

/** Thresholds of {@link createRateLimiter}. */
export interface RateLimitOptions {
  /** @default 1000 */
  windowMs?: number;
  /** @default 10 */
  delayAbove?: number;
  /** @default 20 */
  rejectAbove?: number;
  /** @default 1000 */
  delayMs?: number;
  /** Clock, injectable for unit tests. @default Date.now */
  now?: () => number;
}

/** A limiter keyed by client address. */
export interface RateLimiter {
  /** Records one request from `clientKey` and says how to treat it. */
  check(clientKey: string): RateDecision;
  /** Waits `ms` unless the limiter is closed first (then resolves at once, so shutdown never waits). */
  wait(ms: number): Promise<void>;
  /** Cancels pending waits and forgets all clients. */
  close(): void;
}

/** Creates an in-memory sliding-window limiter (timestamps per client, pruned as they age out). */
export function createRateLimiter(options: RateLimitOptions = {}): RateLimiter {
  const windowMs = options.windowMs ?? 1000;
  const delayAbove = options.delayAbove ?? 10;
  const rejectAbove = options.rejectAbove ?? 20;
  const delayMs = options.delayMs ?? 1000;
  const now = options.now ?? Date.now;
  const hits = new Map<string, number[]>();
  const pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let checksSinceSweep = 0;

  function prune(list: number[], cutoff: number): number[] {
    let i = 0;
    while (i < list.length && (list[i] as number) <= cutoff) i++;
    return i === 0 ? list : list.slice(i);
  }

  /** Drops idle clients now and then, so a scan from many addresses cannot grow the map forever. */
  function sweep(cutoff: number): void {
    for (const [key, list] of hits) {
      const kept = prune(list, cutoff);
      if (kept.length === 0) hits.delete(key);
      else hits.set(key, kept);
    }
  }

  return {
    check(clientKey) {
      const t = now();
      const cutoff = t - windowMs;
      if (++checksSinceSweep >= 1000) {
        checksSinceSweep = 0;
        sweep(cutoff);
      }
      const list = prune(hits.get(clientKey) ?? [], cutoff);
      list.push(t);
      hits.set(clientKey, list);
      if (list.length > rejectAbove)
        return { action: 'reject', retryAfterSeconds: Math.ceil(windowMs / 1000) };
      if (list.length > delayAbove) return { action: 'delay', ms: delayMs };
      return { action: 'allow' };
    },
    wait(ms) {
      return new Promise<void>((resolve) => {
        const entry = {
          resolve,
          timer: setTimeout(() => {
            pending.delete(entry);
            resolve();
          }, ms),
        };
        pending.add(entry);
      });
    },
    close() {
      for (const entry of pending) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      pending.clear();
      hits.clear();
    },
  };
}
