/**
 * Fan-out: executes a subscription's selection once per event and operation, not once per subscriber.
 *
 * The event bridge (src/upstream/live/) hands the same frozen event object to every subscriber of
 * an upstream socket, and an upstream socket is per (conversation, credential). So subscribers that
 * receive the same event object share a credential, and those that also sent the same operation
 * (document, operation name, variables) would compute exactly the same result: the first one to pull
 * the event executes it, the others reuse that ExecutionResult. With 10,000 subscribers this turns
 * 10,000 executions per event into one; serializing and writing each WebSocket frame stays per
 * subscriber (graphql-ws puts the subscriber's own operation id into every message).
 *
 * Over graphql-ws, live subscriptions go one step further: they join a live group (live-fan-out.ts),
 * which also pulls, serializes and writes once per event for all of them.
 */
import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { LiveFanOut, LiveMember } from './live-fan-out.ts';

type MaybePromise<T> = T | Promise<T>;

/** Results per event object, then per operation key; entries go when the event is collected. */
const resultsByEvent = new WeakMap<object, Map<string, MaybePromise<ExecutionResult>>>();
/** Small ids for parsed documents (Yoga's parse cache hands out the same object for the same text). */
const documentIds = new WeakMap<DocumentNode, number>();
let nextDocumentId = 0;

function operationKey(args: ExecutionArgs): string {
  let id = documentIds.get(args.document);
  if (id === undefined) {
    id = nextDocumentId++;
    documentIds.set(args.document, id);
  }
  return `${id}\u0000${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? null)}`;
}

function executeShared(event: unknown, args: ExecutionArgs, key: string): MaybePromise<ExecutionResult> {
  const run = () => execute({ ...args, rootValue: event }) as MaybePromise<ExecutionResult>;
  // Only objects can be shared safely by identity; anything else (never sent today) runs per subscriber.
  if (typeof event !== 'object' || event === null) return run();
  let byOperation = resultsByEvent.get(event);
  if (!byOperation) {
    byOperation = new Map();
    resultsByEvent.set(event, byOperation);
  }
  let result = byOperation.get(key);
  if (result === undefined) {
    result = run();
    byOperation.set(key, result);
  }
  return result;
}

function isPromiseLike<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * The subscription's stream of results: each event of `source` executed through the shared cache,
 * `return`/`throw` passed through so leaving subscribers release the source.
 * A class with promise chains, not async functions or closures: one of these lives per subscriber
 * (its methods on the prototype, not four closures per instance), `next` runs for every subscriber
 * and event, and an async function with two awaits costs several promises where one `then` does
 * (the shared result is usually already there, so the step returns it synchronously).
 */
class SharedResultStream implements AsyncIterableIterator<ExecutionResult> {
  readonly #source: AsyncIterator<unknown>;
  readonly #args: ExecutionArgs;
  readonly #key: string;

  constructor(source: AsyncIterator<unknown>, args: ExecutionArgs, key: string) {
    this.#source = source;
    this.#args = args;
    this.#key = key;
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    return this.#source.next().then(this.#step);
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    await this.#source.return?.();
    return DONE;
  }

  async throw(error: unknown): Promise<IteratorResult<ExecutionResult>> {
    if (this.#source.throw) await this.#source.throw(error);
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  readonly #step = (step: IteratorResult<unknown>): MaybePromise<IteratorResult<ExecutionResult>> => {
    if (step.done) return DONE;
    const value = executeShared(step.value, this.#args, this.#key);
    return isPromiseLike(value) ? value.then(toStep) : { done: false, value };
  };
}

function toStep(value: ExecutionResult): IteratorResult<ExecutionResult> {
  return { done: false, value };
}

/**
 * graphql-js `subscribe`, except that each event is executed through the shared per-event cache, and
 * that a live subscription over graphql-ws becomes a member of `fanOut`'s group when one can deliver
 * it. Exported for tests; the gateway uses it through {@link useSharedSubscriptionResults}.
 */
export async function subscribeSharingResults(
  args: ExecutionArgs,
  fanOut: LiveFanOut | null = null,
): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult | LiveMember> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream as ExecutionResult;
  const key = operationKey(args);
  const source = stream[Symbol.asyncIterator]();
  const member = fanOut?.join(source, args, key, (event) => executeShared(event, args, key));
  return member ?? new SharedResultStream(source, args, key);
}

/** The envelop plugin: replaces subscribe with {@link subscribeSharingResults}. */
export function useSharedSubscriptionResults(fanOut: LiveFanOut | null = null): Plugin {
  const subscribe = (args: ExecutionArgs) => subscribeSharingResults(args, fanOut);
  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(subscribe as never);
    },
  };
}
