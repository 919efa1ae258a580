/**
 * Graceful shutdown, the GraphQL side: once draining starts, new operations are refused with
 * GATEWAY_SHUTTING_DOWN, every open subscription gets one last result carrying that code and then
 * completes (graphql-ws sends `complete`, SSE ends the stream), and the server can wait, bounded,
 * until in-flight queries and mutations have answered. server.ts does the HTTP part (stop accepting,
 * refuse new requests, close sockets) around it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { shuttingDown, streamEndedByShutdown } from '../errors.ts';
import type { OperationGuard } from './protection/operation-guard.ts';
import { LiveMember, type StoppableOperation } from './websocket/live-fan-out.ts';

/** Default bound of the drain phase. `SHUTDOWN_GRACE_MS`. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** Tracks operations in flight and ends streams when draining starts. One per gateway. */
export class ShutdownCoordinator {
  readonly #stop = new AbortController();
  #executing = 0;
  /**
   * One stop function per open subscription stream. A set rather than one 'abort' listener per stream:
   * Node's EventTarget removes listeners in linear time, which made opening thousands of
   * subscriptions quadratic (740 ms of CPU for 5,000 in the fan-out bench).
   */
  readonly #openStreams = new Set<StoppableOperation>();
  /** The exit of every counted execution (one function, not one per operation). */
  readonly #executionEnded = () => {
    this.#executing--;
  };

  /** True once {@link beginDrain} ran. */
  get draining(): boolean {
    return this.#stop.signal.aborted;
  }

  /** Queries and mutations executing now. */
  get executing(): number {
    return this.#executing;
  }

  /** Subscription streams open now. */
  get streams(): number {
    return this.#openStreams.size;
  }

  /** Starts draining: refuse new operations, end every subscription with a last SHUTTING_DOWN result. */
  beginDrain(): void {
    this.#stop.abort();
    for (const stream of this.#openStreams) stream.stop();
  }

  /**
   * Resolves true once nothing is executing or streaming and `alsoIdle()` holds, false when
   * `timeoutMs` passes first (the caller then cuts what is left).
   */
  async waitForIdle(
    timeoutMs: number,
    alsoIdle: () => boolean = () => true,
    onTick?: () => void,
  ): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      onTick?.();
      if (this.#executing === 0 && this.#openStreams.size === 0 && alsoIdle()) return true;
      if (performance.now() >= deadline) return false;
      await sleep(20);
    }
  }

  /**
   * The envelop side of subscriptions: wraps each stream so that draining ends it. Placed right after
   * {@link guard}'s plugin, which refuses a subscription while draining.
   */
  streamsPlugin(): Plugin {
    // One hooks object for every subscription: a fresh one per operation stayed reachable from
    // envelop's subscribe for as long as the stream was open.
    const openStreams = this.#openStreams;
    const streamHooks = {
      onSubscribeResult: ({
        result,
        setResult,
      }: {
        result: AsyncIterableIterator<ExecutionResult> | ExecutionResult;
        setResult: (result: AsyncIterableIterator<ExecutionResult>) => void;
      }) => {
        if (result instanceof LiveMember) {
          // A live group's member sends its own last result; one that began as the drain did stops now.
          if (this.draining) result.stop();
          else result.stopOnDrain(openStreams);
          return;
        }
        if (!(Symbol.asyncIterator in result)) return;
        setResult(new StoppableStream(result, openStreams));
      },
    };
    return {
      onSubscribe: () => streamHooks,
    };
  }

  /**
   * The execution side: refuses every operation while draining; counts queries and mutations while
   * they execute. Counted around the execute function itself (not when the operation is answered,
   * which a throwing execution skips), so the count cannot leak and hold shutdown for its whole grace
   * period.
   */
  guard(): OperationGuard {
    return {
      refusesSubscriptions: true,
      refuse: () => (this.draining ? { errors: [shuttingDown()] } : null),
      enter: () => {
        this.#executing++;
        return this.#executionEnded;
      },
    };
  }
}

/**
 * A result stream that yields one SHUTTING_DOWN result and completes when the coordinator calls
 * {@link StoppableStream.stop} (it stays in `openStreams` while open).
 * A plain iterator, not an async generator: a generator cannot run `return()` while it is suspended
 * in `await`, so a client unsubscribing from a quiet stream would leave the source (and its upstream
 * socket) attached until the next event. Nor an async `next()` racing the source against a stop
 * promise: one of these waits per idle subscriber, and a suspended async function with Promise.race
 * held a generator, three promises and four closures each (heap snapshot of 2,000 idle
 * subscriptions). Here a waiting `next()` is one promise and its settle functions; a stop settles it
 * directly, and a source result arriving after that is ignored.
 */
class StoppableStream implements AsyncIterableIterator<ExecutionResult>, StoppableOperation {
  readonly #source: AsyncIterator<ExecutionResult>;
  readonly #openStreams: Set<StoppableOperation>;
  #finished = false;
  #stopRequested = false;
  /** The `next()` waiting now for the source, if any. */
  #waiting: { resolve: (step: IteratorResult<ExecutionResult>) => void } | null = null;

  constructor(source: AsyncIterable<ExecutionResult>, openStreams: Set<StoppableOperation>) {
    this.#source = source[Symbol.asyncIterator]();
    this.#openStreams = openStreams;
    openStreams.add(this);
  }

  /** Called by the coordinator when draining starts. */
  stop(): void {
    this.#stopRequested = true;
    const waiting = this.#waiting;
    if (!waiting) return;
    this.#waiting = null;
    // Finished (out of `openStreams`) a microtask later, not inside beginDrain: the drain's first idle
    // check runs right after it, and this stream must count until its last result is on its way.
    queueMicrotask(() => waiting.resolve(this.#stopResult()));
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.#finished) return Promise.resolve(DONE);
    if (this.#stopRequested) return Promise.resolve(this.#stopResult());
    return new Promise((resolve, reject) => {
      const waiting = { resolve };
      this.#waiting = waiting;
      this.#source.next().then(
        (step) => {
          if (this.#waiting !== waiting) return;
          this.#waiting = null;
          if (step.done) this.#finish();
          resolve(step);
        },
        (error: unknown) => {
          if (this.#waiting !== waiting) return;
          this.#waiting = null;
          reject(error);
        },
      );
    });
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    this.#finish();
    await this.#source.return?.();
    return DONE;
  }

  async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.#finish();
    if (this.#source.throw) return this.#source.throw(error);
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** The last result (once), releasing the source; DONE when the stream had already finished. */
  #stopResult(): IteratorResult<ExecutionResult> {
    if (!this.#finish()) return DONE;
    void Promise.resolve(this.#source.return?.()).catch(() => {});
    return { done: false, value: { errors: [streamEndedByShutdown()] } };
  }

  #finish(): boolean {
    if (this.#finished) return false;
    this.#finished = true;
    this.#openStreams.delete(this);
    return true;
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });
