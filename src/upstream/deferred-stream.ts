/**
 * A stream whose source is opened asynchronously (`--upstream-api auto` before the API is known: the
 * source is the adapter's stream, chosen once detection answers).
 *
 * Why not `async function* () { yield* await open() }`: a generator suspended in an `await` of the
 * source's `next()` queues `return()` until that `next()` settles, which on a quiet conversation is
 * never. The subscriber then stays attached to its upstream socket after the client has left, and the
 * socket is never idle-closed. Here `return()` reaches the source at once, whatever `next()` is waiting
 * (the adapters' subscribers answer a waiting `next()` with `done` when returned), and a source that
 * opens after `return()` is returned as soon as it exists.
 */

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };

/** Wraps the stream `open` resolves to; see the module. */
export class DeferredStream<T> implements AsyncIterableIterator<T> {
  #source: AsyncIterator<T> | null = null;
  readonly #opening: Promise<AsyncIterator<T>>;
  #returned = false;

  constructor(open: () => Promise<AsyncIterator<T>>) {
    this.#opening = open().then((source) => {
      this.#source = source;
      if (this.#returned) void Promise.resolve(source.return?.()).catch(() => {});
      return source;
    });
    // A failed open is reported by the first next(); without one it must not be an unhandled rejection.
    this.#opening.catch(() => {});
  }

  async next(): Promise<IteratorResult<T>> {
    if (this.#returned) return DONE;
    const source = this.#source ?? (await this.#opening);
    if (this.#returned) return DONE;
    return source.next();
  }

  async return(): Promise<IteratorResult<T>> {
    if (this.#returned) return DONE;
    this.#returned = true;
    // Not yet open: the open's own continuation returns the source once it exists.
    if (this.#source) await this.#source.return?.();
    return DONE;
  }

  throw(): Promise<IteratorResult<T>> {
    return this.return();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
