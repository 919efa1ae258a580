/**
 * The ids of the last `capacity` events a shared socket released, to drop one that arrives again (a
 * reconnect's read overlapping its live frames, a replayed frame). Duplicates only arrive near a seam,
 * so a window bounds the memory per socket without letting one through in practice.
 */
export class RecentIds {
  readonly #capacity: number;
  /** Insertion order is release order: the first entry is the oldest. */
  readonly #ids = new Set<string>();

  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(id: string): void {
    this.#ids.add(id);
    if (this.#ids.size > this.#capacity) {
      const oldest = this.#ids.values().next().value as string;
      this.#ids.delete(oldest);
    }
  }
}
