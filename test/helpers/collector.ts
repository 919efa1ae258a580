/**
 * A collector that drains any async iterator (a graphql-ws or SSE subscription, a bridge stream) in the
 * background and lets a test wait for what it expects.
 */

/** Drains an async iterable into `items`; records how it ended. */
export class Collector<T> {
  readonly items: T[] = [];
  error: unknown = null;
  ended = false;
  readonly #done: Promise<void>;
  #wake: (() => void) | null = null;

  constructor(source: AsyncIterable<T>) {
    this.#done = (async () => {
      try {
        for await (const item of source) {
          this.items.push(item);
          this.#wake?.();
        }
      } catch (error) {
        this.error = error;
      } finally {
        this.ended = true;
        this.#wake?.();
      }
    })();
  }

  /** Resolves once `predicate(items)` holds; rejects after `timeoutMs` with what was seen so far. */
  async until(predicate: (items: T[]) => boolean, timeoutMs = 5000): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.items)) {
      if (this.ended) throw new Error(`stream ended (${String(this.error)}) before the condition held`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; collected ${this.items.length} items`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
    return this.items;
  }

  /** Resolves when the source has ended (normally or with an error). */
  finished(): Promise<void> {
    return this.#done;
  }
}
