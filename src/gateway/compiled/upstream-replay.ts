/**
 * Record and replay of an operation's upstream calls, so that the engine can run an operation after
 * its compiled plan without asking the upstream twice: the plan runs over a recording session, and the
 * engine over a replaying one that answers each call the plan made (same method, same arguments) with
 * the very promise the plan got, once, in the order they were made. A call the plan did not make goes
 * to the upstream as usual.
 *
 * Only calls that answer a promise are recorded (the port's pure helpers, such as reading a cursor,
 * are simply called again), and only through the session's own methods: the session object itself
 * stays the one the operation's plugins see (the deadline swaps its signal on it).
 */
import type { UpstreamSession } from '../../upstream/port/upstream.ts';
import { isThenable } from './thenable.ts';

/** The calls an operation's plan made, by method and arguments. */
export class UpstreamCallRecord {
  readonly #calls = new Map<string, Array<PromiseLike<unknown>>>();

  /** A session that makes its calls through `session` and records each promise it answers. */
  recording(session: UpstreamSession): UpstreamSession {
    return withCalls(session, (method, args, call) => {
      const answer = call();
      if (isThenable(answer)) {
        const key = callKey(method, args);
        if (key !== null) {
          const recorded = this.#calls.get(key);
          if (recorded) recorded.push(answer);
          else this.#calls.set(key, [answer]);
        }
      }
      return answer;
    });
  }

  /** A session that answers recorded calls from the record (each once), and the others through `session`. */
  replaying(session: UpstreamSession): UpstreamSession {
    const remaining = new Map<string, number>();
    return withCalls(session, (method, args, call) => {
      const key = callKey(method, args);
      const recorded = key === null ? undefined : this.#calls.get(key);
      if (key === null || recorded === undefined) return call();
      const used = remaining.get(key) ?? 0;
      if (used >= recorded.length) return call();
      remaining.set(key, used + 1);
      return recorded[used];
    });
  }
}

type CallThrough = (method: string, args: unknown[], call: () => unknown) => unknown;

/** `session` with every method call going through `through`; properties read and written as they are. */
function withCalls(session: UpstreamSession, through: CallThrough): UpstreamSession {
  return new Proxy(session, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) =>
        through(property, args, () => (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

/** Method and arguments as one string; null when the arguments do not serialize (never replayed). */
function callKey(method: string, args: unknown[]): string | null {
  try {
    return `${method}(${JSON.stringify(args)})`;
  } catch {
    return null;
  }
}
