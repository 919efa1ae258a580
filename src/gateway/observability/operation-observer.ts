/**
 * gateway/observability/: what an operator sees. This room holds the one observer of operations
 * (this file) and what it feeds: the operation log (logging.ts), Prometheus metrics (metrics.ts),
 * OpenTelemetry traces (tracing.ts), plus the defensive error-code reader (error-code.ts) and the
 * rate-limited upstream failure log (upstream-failure-log.ts). It may import websocket/ and protection/.
 *
 * The one operation observer: a single set of envelop hooks per operation that tells every observer
 * (the operation log, metrics, traces) when the operation starts, when its first answer is known and
 * when it ends, with the errors the client got. The operation's name and type are read once per parsed
 * document, not once per observer; a subscription gets one stream watch, not one per observer (at
 * fan-out scale every hook object is held by every idle subscriber).
 *
 * A query or mutation ends when it executed. A subscription is answered when its stream begins or it
 * is refused, and ends when its stream ends (completed, left by the client, failed, cut by shutdown)
 * or at once when refused. Each observer call is guarded: what an observer throws goes to `report`
 * naming that observer, and neither the operation nor the other observers notice.
 */
import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LiveMember } from '../websocket/live-fan-out.ts';

/** Receives what an observer threw; `observer` names it (e.g. `metrics`). */
export type ObserverFault = (error: unknown, observer: string) => void;

/** Used when nobody passed a reporter (tests building parts alone). */
export const reportToConsole: ObserverFault = (error, observer) => {
  console.error(`observer ${observer} failed; the operation went on`, error);
};

/** The errors of an operation that had none (one frozen array for all of them). */
const NO_ERRORS: readonly unknown[] = Object.freeze([]);

/** What every observer learns about an operation when it starts (shared: see {@link describe}). */
export interface ObservedOperation {
  /** The operation's name in the document, else the requested `operationName`, else undefined. */
  readonly name: string | undefined;
  /** `execute` (query, mutation) or `subscribe`. */
  readonly type: 'execute' | 'subscribe';
  /** The operation keyword; `query` when the document names no operation that exists. */
  readonly operationType: 'query' | 'mutation' | 'subscription';
}

/** One observer's view of one operation; every member is optional. */
export interface OperationWatch {
  /** Runs the execute/subscribe call, so async work started inside belongs to the operation (spans). */
  run?<T>(call: () => T): T;
  /** The first answer is known: a query's result, or a subscription's stream (no errors) or refusal. */
  answered?(errors: readonly unknown[]): void;
  /** A subscription began streaming; `ended` follows exactly once. */
  streaming?(): void;
  /**
   * The operation ended: a query executed, a subscription's stream ended or it was refused. Told in
   * batches, up to {@link ENDED_BATCH_MS} after the end (see {@link flushEndedOperations}); `endedAt` is
   * `performance.now()` when it ended, so durations are the operation's own.
   */
  ended?(errors: readonly unknown[], endedAt: number): void;
}

/** An observer: its name (for fault reports) and what it does when an operation starts. */
export interface OperationObserver {
  readonly name: string;
  start(operation: ObservedOperation): OperationWatch;
}

/**
 * Parsed documents are cached by Yoga, so the same object comes back for the same text: an operation's
 * description is built once per document, operation name and type, and then shared by every operation
 * that sends them (observers get the same object each time and must not change it), for the names the
 * document holds.
 */
const described = {
  execute: new WeakMap<DocumentNode, Map<string, ObservedOperation>>(),
  subscribe: new WeakMap<DocumentNode, Map<string, ObservedOperation>>(),
};

function describe(
  document: DocumentNode,
  requested: string | null | undefined,
  type: ObservedOperation['type'],
): ObservedOperation {
  let byName = described[type].get(document);
  if (!byName) {
    byName = new Map();
    described[type].set(document, byName);
  }
  const key = requested ?? '';
  let description = byName.get(key);
  if (!description) {
    const operation = getOperationAST(document, requested);
    description = Object.freeze({
      name: operation?.name?.value ?? requested ?? undefined,
      type,
      operationType: operation?.operation ?? 'query',
    });
    // A requested name the document does not hold is the caller's free text (the operation then fails
    // with "Unknown operation named"): kept, it would let a caller grow this map, and what observers
    // keep per description (the log's child logger), without bound. Such a description is made anew.
    if (operation !== null || requested == null) byName.set(key, description);
  }
  return description;
}

/** The observers of a gateway and where their faults go: one per plugin, shared by every operation. */
interface ObserverSet {
  readonly observers: readonly OperationObserver[];
  readonly report: ObserverFault;
}

/** Where an observer that failed to start sits in an operation's watches: it is not called again. */
const NOT_WATCHING: OperationWatch = Object.freeze({});

/**
 * The watches of one operation, each call guarded and reported under its observer's name. Watch `i`
 * is observer `i`'s, so the names are read from the shared set instead of being kept per operation: at
 * fan-out scale an idle subscriber holds this object and the watches in it, nothing more. The first
 * two watches (the log's and the metrics') are fields, the rest in an array: an array and its store
 * were 64 of each idle subscriber's bytes. No `#` methods: they give every instance a brand slot.
 */
export class Watches implements EndedLater<readonly unknown[]> {
  readonly #set: ObserverSet;
  readonly #first: OperationWatch;
  readonly #second: OperationWatch;
  readonly #rest: readonly OperationWatch[] | null;
  #ended = false;

  constructor(set: ObserverSet, operation: ObservedOperation) {
    this.#set = set;
    const { observers } = set;
    const watches = new Array<OperationWatch>(observers.length);
    for (let index = 0; index < observers.length; index++) {
      const observer = observers[index] as OperationObserver;
      try {
        // `?? NOT_WATCHING`: an observer written in plain JS that returns nothing is left out, not a crash.
        watches[index] = observer.start(operation) ?? NOT_WATCHING;
      } catch (error) {
        watches[index] = NOT_WATCHING;
        this.fault(error, index);
      }
    }
    this.#first = watches[0] ?? NOT_WATCHING;
    this.#second = watches[1] ?? NOT_WATCHING;
    this.#rest = watches.length > 2 ? watches.slice(2) : null;
  }

  /** Observer `index`'s watch. */
  private watch(index: number): OperationWatch {
    if (index === 0) return this.#first;
    if (index === 1) return this.#second;
    return this.#rest?.[index - 2] ?? NOT_WATCHING;
  }

  /** Wraps `call` in every observer's `run`, innermost last; a faulty `run` is skipped. */
  run<T>(call: () => T): T {
    let wrapped = call;
    for (let index = this.#set.observers.length - 1; index >= 0; index--) {
      const watch = this.watch(index);
      if (!watch.run) continue;
      const inner = wrapped;
      const observer = index;
      wrapped = () => {
        let entered = false;
        try {
          return watch.run?.(() => {
            entered = true;
            return inner();
          }) as T;
        } catch (error) {
          // What the operation itself threw passes through; only the observer's own fault is caught.
          if (entered) throw error;
          this.fault(error, observer);
          return inner();
        }
      };
    }
    return wrapped();
  }

  get wraps(): boolean {
    for (let index = 0; index < this.#set.observers.length; index++) if (this.watch(index).run) return true;
    return false;
  }

  answered(errors: readonly unknown[]): void {
    this.each('answered', errors);
  }

  streaming(): void {
    this.each('streaming', NO_ERRORS);
  }

  /** Once, whatever path reports the end first; the watches are told in the next batch. */
  ended(errors: readonly unknown[]): void {
    if (this.#ended) return;
    this.#ended = true;
    tellEndedLater(this, errors, performance.now());
  }

  /** Tells every watch that has `ended` (the batch of {@link EndedOperations} calls this). */
  tellEnded(errors: readonly unknown[], endedAt: number): void {
    for (let index = 0; index < this.#set.observers.length; index++) {
      const watch = this.watch(index);
      if (!watch.ended) continue;
      try {
        watch.ended(errors, endedAt);
      } catch (error) {
        this.fault(error, index);
      }
    }
  }

  /** Calls `method` of every watch that has it, each guarded (by name, not a closure per call). */
  private each(method: 'answered' | 'streaming', errors: readonly unknown[]): void {
    for (let index = 0; index < this.#set.observers.length; index++) {
      const watch = this.watch(index);
      const call = watch[method];
      if (!call) continue;
      try {
        call.call(watch, errors);
      } catch (error) {
        this.fault(error, index);
      }
    }
  }

  private fault(error: unknown, observer: number): void {
    try {
      this.#set.report(error, this.#set.observers[observer]?.name ?? 'observer');
    } catch {
      // The reporter itself failed (a closed log stream): nothing else is left to tell.
    }
  }
}

/** The longest an ended operation waits before its observers are told (log line, metrics). */
export const ENDED_BATCH_MS = 25;
/** Ends told at once, at most: the batch is told as soon as it holds this many. */
const ENDED_BATCH_SIZE = 256;

/** What is told of an end in a batch: an operation's watches, an upstream attempt's metrics. */
export interface EndedLater<Detail> {
  tellEnded(detail: Detail, endedAt: number): void;
}

/**
 * Operations (and their upstream attempts, metrics.ts) that ended and whose observers are yet to be
 * told, told together: every {@link ENDED_BATCH_MS} or {@link ENDED_BATCH_SIZE} ends, whichever comes
 * first, and whenever someone needs them told now ({@link flushEndedOperations}: the metrics' scrape,
 * the log's flush).
 *
 * Why batches: each operation's line and metrics, run at its end among the rest of a request's work,
 * cost about 4% of a V1 list request's CPU more than the same calls run one after another for many
 * operations, where their code and data stay in the processor's caches (`bench/ab.ts --base <ref>
 * --work list --api v1`, 10-12 paired rounds: 0.959x and 0.962x; told at the end of the same turn of
 * the event loop instead, as setImmediate does, a few at a time: 0.996x, no gain; the upstream
 * attempts' metrics in the same batches, another 0.965x). The log line's
 * `time` is when it is written, up to {@link ENDED_BATCH_MS} after the end; its `durationMs` and the
 * duration histogram use the time the operation ended.
 *
 * One per process (every gateway in it shares the timer): a flat array of what is told, its detail
 * (an operation's errors, an attempt's outcome) and the end's time, no object per end.
 */
class EndedOperations {
  #pending: unknown[] = [];
  #timer: NodeJS.Timeout | null = null;

  add<Detail>(ended: EndedLater<Detail>, detail: Detail, endedAt: number): void {
    const pending = this.#pending;
    pending.push(ended, detail, endedAt);
    if (pending.length >= ENDED_BATCH_SIZE * 3) this.flush();
    else this.#timer ??= setTimeout(this.flush, ENDED_BATCH_MS).unref();
  }

  /** Tells every pending end, in the order they came. */
  readonly flush = (): void => {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    const batch = this.#pending;
    if (batch.length === 0) return;
    // An end that comes while the batch is told goes into the next batch, not into this one.
    this.#pending = [];
    for (let at = 0; at < batch.length; at += 3) {
      try {
        (batch[at] as EndedLater<unknown>).tellEnded(batch[at + 1], batch[at + 2] as number);
      } catch (error) {
        // Watches guard their observers themselves; this keeps anything else told here from
        // stopping the rest of the batch, or from escaping the timer and ending the process.
        reportToConsole(error, 'ended batch');
      }
    }
  };
}

const endedOperations = new EndedOperations();

/** Tells `ended` in the next batch that it ended at `endedAt` (`performance.now()` then), with `detail`. */
export function tellEndedLater<Detail>(ended: EndedLater<Detail>, detail: Detail, endedAt: number): void {
  endedOperations.add(ended, detail, endedAt);
}

/**
 * Tells the observers of every operation (and upstream attempt) that has ended so far, now: before
 * metrics are scraped and before log lines are flushed (at exit too), so both show every end before them.
 */
export function flushEndedOperations(): void {
  endedOperations.flush();
}

/**
 * One subscription's stream, watched through envelop's own layers (no wrapper of ours per subscriber):
 * results and normal ends come from `onNext` / `onEnd`, which envelop applies outermost (after, e.g.,
 * the shutdown plugin has added its last GATEWAY_SHUTTING_DOWN result), so observers see exactly what
 * the client sees; a failing source never reaches `onEnd` but does reach `onSubscribeError`.
 */
class StreamWatch {
  #errors: readonly unknown[] = NO_ERRORS;
  readonly #watches: Watches;

  constructor(watches: Watches) {
    this.#watches = watches;
  }

  onNext = ({ result }: { result: ExecutionResult }): void => {
    if (result.errors) this.#errors = this.#errors.concat(result.errors);
  };

  onEnd = (): void => this.#watches.ended(this.#errors);

  fail(error: unknown): void {
    this.#watches.ended([...this.#errors, error ?? new Error('the stream failed')]);
  }
}

/** The plugin that feeds every observer from one set of hooks. */
export function useOperationObservers(
  observers: readonly OperationObserver[],
  report: ObserverFault = reportToConsole,
): Plugin {
  return new OperationObservers(observers, report).plugin();
}

/**
 * The observers of a gateway: {@link plugin} watches the operations envelop runs, {@link watchExecute}
 * the queries and mutations the HTTP fast path runs without envelop (gateway/compiled/prepared-operations.ts).
 */
export class OperationObservers {
  readonly #set: ObserverSet;

  constructor(observers: readonly OperationObserver[], report: ObserverFault = reportToConsole) {
    this.#set = { observers: [...observers], report };
  }

  /**
   * The watches of a query or mutation starting now: the caller wraps its execute function in
   * {@link Watches.run} (when {@link Watches.wraps}) and reports its result's errors to `answered` and `ended`.
   */
  watchExecute(document: DocumentNode, requested: string | null | undefined): Watches {
    return new Watches(this.#set, describe(document, requested, 'execute'));
  }

  plugin(): Plugin {
    const set = this.#set;
    const start = (
      document: DocumentNode,
      requested: string | null | undefined,
      type: ObservedOperation['type'],
    ) => new Watches(set, describe(document, requested, type));
    return {
      onExecute({ args, executeFn, setExecuteFn }) {
        const watches = start(args.document, args.operationName, 'execute');
        if (watches.wraps) setExecuteFn((executeArgs) => watches.run(() => executeFn(executeArgs)));
        return {
          onExecuteDone({ result }) {
            // Incremental delivery: the gateway does not use it, so no per-part detail.
            const errors = Symbol.asyncIterator in result ? NO_ERRORS : (result.errors ?? NO_ERRORS);
            watches.answered(errors);
            watches.ended(errors);
          },
        };
      },
      onSubscribe({ args, subscribeFn, setSubscribeFn }) {
        const watches = start(args.document, args.operationName, 'subscribe');
        if (watches.wraps) setSubscribeFn((subscribeArgs) => watches.run(() => subscribeFn(subscribeArgs)));
        let stream: StreamWatch | undefined;
        return {
          onSubscribeResult({ result }) {
            if (result instanceof LiveMember) {
              // Delivered by a live group, outside envelop's stream wrappers: it reports its own end, to
              // the watches themselves (a closure here would keep this hook's scope for the stream's life).
              watches.answered(NO_ERRORS);
              watches.streaming();
              result.watchEnd(watches);
              return;
            }
            if (!(Symbol.asyncIterator in result)) {
              // Refused before streaming (bad id, rate limited, draining): one result, reported now.
              const errors = result.errors ?? NO_ERRORS;
              watches.answered(errors);
              watches.ended(errors);
              return;
            }
            watches.answered(NO_ERRORS);
            watches.streaming();
            stream = new StreamWatch(watches);
            return stream;
          },
          onSubscribeError({ error }) {
            // Before streaming: subscribe itself failed. While streaming: the source failed.
            if (stream) {
              stream.fail(error);
              return;
            }
            watches.answered([error]);
            watches.ended([error]);
          },
        };
      },
    };
  }
}
