/**
 * Observers (the operation log, metrics, traces) watch operations; a bug in one must be a log line,
 * never an answer. {@link guardObserver} wraps every hook of an observer plugin, and what those hooks
 * return (after-hooks, hook bags, promises), so nothing they throw reaches the operation.
 * {@link observeStream} watches a subscription's result stream and reports its end exactly once,
 * whatever ends it: completion, the client leaving (`return`), a failing source (`next` rejects,
 * which envelop's own `onEnd` hook misses), or `throw`.
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

/** What {@link observeStream} tells its observer. */
export interface StreamObserver {
  /** Each result the stream yields. */
  result?(result: ExecutionResult): void;
  /** Once, when the stream ended for any reason. */
  end(): void;
}

/**
 * A pass-through of `source` that tells `observer` about each result and, exactly once, about the end.
 * Plain promise callbacks rather than an async generator: a generator cannot run `return()` while it
 * waits in `next()`, and this wraps every subscriber's stream. What the observer throws goes to
 * `report`; the stream goes on.
 */
export function observeStream(
  source: AsyncIterable<ExecutionResult>,
  observer: StreamObserver,
  report: (error: unknown) => void,
): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    try {
      observer.end();
    } catch (error) {
      report(error);
    }
  };
  const failed = (error: unknown): never => {
    end();
    throw error;
  };
  return {
    next() {
      let step: Promise<IteratorResult<ExecutionResult>>;
      try {
        step = iterator.next();
      } catch (error) {
        end();
        return Promise.reject(error);
      }
      return step.then((item) => {
        if (item.done) end();
        else if (observer.result) {
          try {
            observer.result(item.value);
          } catch (error) {
            report(error);
          }
        }
        return item;
      }, failed);
    },
    return(value?: unknown) {
      end();
      return iterator.return
        ? iterator.return(value)
        : Promise.resolve({ done: true, value: undefined } as IteratorResult<ExecutionResult>);
    },
    throw(error?: unknown) {
      end();
      return iterator.throw ? iterator.throw(error) : Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
