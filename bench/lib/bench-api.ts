/**
 * Which OpenHands API a bench stack speaks (a local service started with `--api`, a gateway with
 * `--upstream-api`), and how its results are named: V0's keep their historical names (`list`,
 * `fan-out 1000`), V1's carry a suffix (`list (v1)`, `fan-out 1000 (v1)`), so one run's table and
 * bench/results/latest.json hold both side by side.
 */

/** The APIs the bench can measure, in the order a run measures them. */
export const BENCH_APIS = ['v0', 'v1'] as const;
export type BenchApi = (typeof BENCH_APIS)[number];

/** `--api v0,v1` -> the APIs, in {@link BENCH_APIS} order; throws on an unknown one. */
export function parseApis(text: string | undefined): BenchApi[] {
  if (text === undefined) return [...BENCH_APIS];
  const asked = text.split(',').map((api) => api.trim());
  for (const api of asked) {
    if (!(BENCH_APIS as readonly string[]).includes(api))
      throw new Error(`unknown api "${api}"; known: ${BENCH_APIS.join(', ')}`);
  }
  return BENCH_APIS.filter((api) => asked.includes(api));
}

/** A scenario or row name as reported for `api`: unchanged on V0, `<name> (v1)` on V1. */
export function named(name: string, api: BenchApi): string {
  return api === 'v0' ? name : `${name} (${api})`;
}
