/** Small statistics helpers: percentiles of latency samples and medians of repeated rounds. */

/** The p-th percentile (0..100) of already sorted samples, nearest-rank; NaN for no samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] as number;
}

/** Sorts a copy ascending. */
export function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Median of unsorted values (the statistic reported for repeated rounds on a noisy machine). */
export function median(values: readonly number[]): number {
  const s = sorted(values);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Rounds for display and JSON: 2 decimals below 10, 1 below 1000, none above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  const abs = Math.abs(value);
  const digits = abs < 10 ? 100 : abs < 1000 ? 10 : 1;
  return Math.round(value * digits) / digits;
}
