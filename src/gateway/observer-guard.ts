/**
 * Observers (the operation log, metrics, traces) watch operations; a bug in one must be a log line,
 * never an answer. {@link guardObserver} wraps every hook of an observer plugin, and what those hooks
 * return (after-hooks, hook bags, promises), so nothing they throw reaches the operation.
 * {@link watchStream} watches a subscription's result stream and reports its end exactly once,
 * whatever ends it: completion, the client leaving (`return`), or a failing source (`next` rejects:
 * envelop's `onEnd` misses that, its `onSubscribeError` does not).
 */
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Receives what an observer threw; `observer` names it (e.g. `metrics`). */
export type ObserverFault = (error: unknown, observer: string) => void;

/** Used when nobody passed a reporter (tests building parts alone). */
export const reportToConsole: ObserverFault = (error, observer) => {
  console.error(`observer ${observer} failed; the operation went on`, error);
};

type Report = (error: unknown) => void;
type Callable = (...args: unknown[]) => unknown;

/** Hook bags nest at most this deep (onExecute -> onExecuteDone -> onNext). */
const MAX_DEPTH = 3;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/** The one typed glue of this module: a hook of unknown shape, called with a safety net. */
function guardFunction(hook: Callable, report: Report, depth: number): Callable {
  return function guarded(this: unknown, ...args: unknown[]) {
    try {
      return guardReturned(hook.apply(this, args), report, depth - 1);
    } catch (error) {
      report(error);
      return undefined;
    }
  };
}

function guardReturned(value: unknown, report: Report, depth: number): unknown {
  if (typeof value === 'function') return guardFunction(value as Callable, report, depth);
  if (isThenable(value)) {
    return Promise.resolve(value).then(
      (settled) => guardReturned(settled, report, depth),
      (error: unknown) => {
        report(error);
        return undefined;
      },
    );
  }
  if (typeof value === 'object' && value !== null && depth > 0) {
    const bag: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(value)) {
      bag[name] = typeof member === 'function' ? guardFunction(member as Callable, report, depth) : member;
    }
    return bag;
  }
  return value;
}

/**
 * The same plugin with every `on*` hook unable to throw into the operation: a throw (or a rejected
 * promise) is handed to `report` and the hook counts as having done nothing.
 */
export function guardObserver<TContext extends Record<string, unknown>>(
  plugin: Plugin<TContext>,
  observer: string,
  report: ObserverFault,
): Plugin<TContext> {
  const forward: Report = (error) => {
    try {
      report(error, observer);
    } catch {
      // The reporter itself failed (a closed log stream): nothing else is left to tell.
    }
  };
  const guarded: Record<string, unknown> = {};
  for (const [name, hook] of Object.entries(plugin)) {
    guarded[name] =
      name.startsWith('on') && typeof hook === 'function'
        ? guardFunction(hook as Callable, forward, MAX_DEPTH)
        : hook;
  }
  return guarded as Plugin<TContext>;
}

/** What {@link watchStream} tells its observer. */
export interface StreamObserver {
  /** Each result the client gets. */
  result?(result: ExecutionResult): void;
  /** Once, when the stream ended for any reason; `failure` when its source failed. */
  end(failure?: unknown): void;
}

/** What an observer's subscribe hooks do with {@link watchStream}'s answer. */
export interface StreamWatch {
  /** Returned from `onSubscribeResult`: envelop applies them outermost, after every plugin's wrapper. */
  hooks: { onNext(payload: { result: ExecutionResult }): void; onEnd(): void };
  /** Called from `onSubscribeError`, which envelop runs when the stream's `next()` rejects. */
  fail(error: unknown): void;
}

/**
 * Watches a subscription stream for an observer, through envelop's own layers (no wrapper of ours per
 * subscriber): results and normal ends come from `onNext` / `onEnd`, which envelop applies outermost
 * (after, e.g., the shutdown plugin has added its last GATEWAY_SHUTTING_DOWN result), so the observer
 * sees exactly what the client sees; a failing source never reaches `onEnd` but does reach
 * `onSubscribeError`, which calls {@link StreamWatch.fail}. The observer's `end` runs exactly once
 * whichever comes first; what it throws goes to `report`.
 */
export function watchStream(observer: StreamObserver, report: (error: unknown) => void): StreamWatch {
  let ended = false;
  const end = (failure?: unknown): void => {
    if (ended) return;
    ended = true;
    try {
      if (failure === undefined) observer.end();
      else observer.end(failure);
    } catch (error) {
      report(error);
    }
  };
  return {
    hooks: {
      onNext({ result }) {
        if (ended || !observer.result) return;
        try {
          observer.result(result);
        } catch (error) {
          report(error);
        }
      },
      onEnd: () => end(),
    },
    fail: (error) => end(error ?? new Error('the stream failed')),
  };
}
