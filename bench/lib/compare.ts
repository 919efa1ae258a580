/**
 * Side-by-side measurement: the gateway run and the direct REST run alternate, round after round,
 * so noise from the other processes on this 2-core machine hits both alike; medians are reported.
 */
import { median, round } from './stats.ts';

/** Figures of one side (gateway or direct) over all rounds, as medians, plus the raw rounds. */
export interface SideSummary<F> {
  median: F;
  rounds: F[];
}

/** Both sides of a comparison. */
export interface Comparison<F> {
  gateway: SideSummary<F>;
  direct: SideSummary<F>;
}

/**
 * Runs `measure(side)` alternately for gateway and direct, `rounds` times each (the side that goes
 * first alternates too, so warm-up and drift do not favour one).
 */
export async function alternate<F extends { [K in keyof F]: number }>(
  rounds: number,
  measure: (side: 'gateway' | 'direct') => Promise<F>,
): Promise<Comparison<F>> {
  const gateway: F[] = [];
  const direct: F[] = [];
  for (let r = 0; r < rounds; r++) {
    const order: Array<'gateway' | 'direct'> = r % 2 === 0 ? ['gateway', 'direct'] : ['direct', 'gateway'];
    for (const side of order) {
      const figures = await measure(side);
      (side === 'gateway' ? gateway : direct).push(figures);
    }
  }
  return { gateway: summarize(gateway), direct: summarize(direct) };
}

/**
 * Like {@link alternate} for any number of sides (gateway, direct and the floors): each round runs
 * every side once, the starting side rotating from round to round.
 */
export async function alternateSides<S extends string, F extends { [K in keyof F]: number }>(
  rounds: number,
  sides: readonly S[],
  measure: (side: S) => Promise<F>,
): Promise<Record<S, SideSummary<F>>> {
  const figures = new Map<S, F[]>(sides.map((side) => [side, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < sides.length; i++) {
      const side = sides[(r + i) % sides.length] as S;
      figures.get(side)?.push(await measure(side));
    }
  }
  return Object.fromEntries(sides.map((side) => [side, summarize(figures.get(side) ?? [])])) as Record<
    S,
    SideSummary<F>
  >;
}

/**
 * The median of per-round ratios `numerator[i] / denominator[i]`: each pair was measured in the same
 * round, seconds apart, so what changed the machine's speed between rounds cancels out in each ratio
 * (a ratio of the two sides' medians mixes rounds of different speeds).
 */
export function pairedRatio(numerator: readonly number[], denominator: readonly number[]): number {
  const ratios = numerator.map((value, at) => value / (denominator[at] as number));
  return round(median(ratios));
}

function summarize<F extends { [K in keyof F]: number }>(rounds: F[]): SideSummary<F> {
  const first = rounds[0];
  if (!first) throw new Error('no rounds measured');
  const out: Record<string, number> = {};
  for (const key of Object.keys(first) as Array<keyof F & string>) {
    out[key] = round(median(rounds.map((f) => f[key])));
  }
  return { median: out as F, rounds };
}
