/**
 * One labelled series of a prom-client Counter or Histogram, counted without prom-client's per-call
 * work. A child from `labels()` still copies, validates and hashes its labels on every `inc()` and
 * `observe()` (prom-client 15: about 3 µs per operation for the operation metrics alone, once per
 * query and once per upstream attempt). A series here goes through prom-client once, to create its
 * entry, then adds to that entry itself: the same fields prom-client adds to (`value`; `sum`, `count`
 * and the bucket), so `/metrics` prints exactly what prom-client would have printed.
 *
 * The entry is prom-client's own record in the metric's `hashMap` (15.x: a counter's is
 * `{ value, labels }`, a histogram's `{ labels, bucketValues, sum, count }`). Each call checks that
 * the metric still holds that very entry (a `reset()` or `remove()` replaces or drops it) and that it
 * has the expected shape; otherwise it counts through prom-client's public call, as before, and looks
 * for the entry again. A prom-client whose records look different is therefore slower, never wrong.
 */
import type { Counter, Histogram } from 'prom-client';

/** prom-client's record of one series: the fields this file reads and adds to. */
interface CounterEntry {
  value: number;
  labels: Record<string, string>;
}
interface HistogramEntry {
  labels: Record<string, string>;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

/** prom-client's per-metric table of series (not part of its typings). */
type SeriesTable<T> = Record<string, T | undefined>;

function tableOf<T>(metric: object): SeriesTable<T> | null {
  const table: unknown = (metric as { hashMap?: unknown }).hashMap;
  return typeof table === 'object' && table !== null ? (table as SeriesTable<T>) : null;
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(b);
  if (Object.keys(a).length !== keys.length) return false;
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}

/** The key under which `table` holds the series with `labels`, if any (one scan per series). */
function keyOf<T extends { labels: Record<string, string> }>(
  table: SeriesTable<T>,
  labels: Record<string, string>,
  isEntry: (entry: unknown) => entry is T,
): string | null {
  for (const key in table) {
    const entry = table[key];
    if (isEntry(entry) && typeof entry.labels === 'object' && sameLabels(entry.labels, labels)) return key;
  }
  return null;
}

/** The series with `labels` in `metric`'s table, as its key and prom-client's entry; null when none. */
function findSeries<T extends { labels: Record<string, string> }>(
  metric: object,
  labels: Record<string, string>,
  isEntry: (entry: unknown) => entry is T,
): { key: string; entry: T } | null {
  const table = tableOf<T>(metric);
  const key = table && keyOf(table, labels, isEntry);
  const entry = key ? table?.[key] : undefined;
  return key && entry ? { key, entry } : null;
}

function isCounterEntry(entry: unknown): entry is CounterEntry {
  return typeof entry === 'object' && entry !== null && typeof (entry as CounterEntry).value === 'number';
}

function isHistogramEntry(entry: unknown): entry is HistogramEntry {
  if (typeof entry !== 'object' || entry === null) return false;
  const { sum, count, bucketValues } = entry as HistogramEntry;
  return typeof sum === 'number' && typeof count === 'number' && typeof bucketValues === 'object';
}

/** One series of a Counter: `inc()` adds 1. */
export class CounterSeries<L extends string> {
  readonly #counter: Counter<L>;
  readonly #labels: Record<L, string>;
  #series: { key: string; entry: CounterEntry } | null = null;

  constructor(counter: Counter<L>, labels: Record<L, string>) {
    this.#counter = counter;
    this.#labels = labels;
  }

  inc(): void {
    const series = this.#series;
    if (series !== null && tableOf<CounterEntry>(this.#counter)?.[series.key] === series.entry) {
      series.entry.value += 1;
      return;
    }
    this.#counter.inc(this.#labels, 1);
    this.#series = findSeries(this.#counter, this.#labels, isCounterEntry);
  }
}

/** One series of a Histogram whose bucket bounds are `buckets` (the ones it was built with). */
export class HistogramSeries<L extends string> {
  readonly #histogram: Histogram<L>;
  readonly #labels: Record<L, string>;
  readonly #buckets: readonly number[];
  /** Each bound as the property name prom-client's record keeps its count under (`0.001` -> "0.001"). */
  readonly #bucketKeys: readonly string[];
  #series: { key: string; entry: HistogramEntry } | null = null;

  constructor(histogram: Histogram<L>, labels: Record<L, string>, buckets: readonly number[]) {
    this.#histogram = histogram;
    this.#labels = labels;
    this.#buckets = buckets;
    this.#bucketKeys = buckets.map(String);
  }

  observe(value: number): void {
    const series = this.#series;
    if (
      series !== null &&
      Number.isFinite(value) &&
      tableOf<HistogramEntry>(this.#histogram)?.[series.key] === series.entry
    ) {
      const { entry } = series;
      entry.sum += value;
      entry.count += 1;
      // As prom-client does: the first bound the value fits under; above the last, only the count.
      // By the bound's name, made once: a number as a property key is turned into text at each use.
      const buckets = this.#buckets;
      for (let index = 0; index < buckets.length; index++) {
        if (value <= (buckets[index] as number)) {
          const bound = this.#bucketKeys[index] as string;
          if (Object.hasOwn(entry.bucketValues, bound))
            entry.bucketValues[bound] = (entry.bucketValues[bound] as number) + 1;
          break;
        }
      }
      return;
    }
    this.#histogram.observe(this.#labels, value);
    this.#series = findSeries(this.#histogram, this.#labels, isHistogramEntry);
  }
}
