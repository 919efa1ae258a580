/**
 * The benchmark's output: rows for the printed table and the JSON written to bench/results/latest.json.
 */

/** A target from the issue and whether this run met it. */
interface TargetCheck {
  /** e.g. "ratio >= 0.7". */
  goal: string;
  met: boolean;
}

/** One line of the table. */
export interface Row {
  scenario: string;
  measure: string;
  gateway: string;
  direct: string;
  /** Ratio, difference or other derived figure. */
  derived: string;
  /** The same measure for the floor(s) of bench/floors/, where the scenario has one. */
  floor?: string;
  /** gateway / floor for that measure (e.g. "3.4x"; for throughput below 1 means slower). */
  vsFloor?: string;
  target?: TargetCheck;
}

/** What a scenario hands back: table rows plus its raw figures for the JSON file. */
export interface ScenarioResult {
  name: string;
  rows: Row[];
  details: unknown;
}

/** Formats a number for the table: ms with 2 decimals below 10, else 1 or 0. */
export function fmt(value: number, unit = ''): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  const text = abs < 10 ? value.toFixed(2) : abs < 1000 ? value.toFixed(1) : value.toFixed(0);
  return unit ? `${text} ${unit}` : text;
}

/** `gateway / floor` as printed: "3.40x", or n/a when either is missing. */
export function ratio(gateway: number, floor: number): string {
  if (!Number.isFinite(gateway) || !Number.isFinite(floor) || floor === 0) return 'n/a';
  return `${(gateway / floor).toFixed(2)}x`;
}

/** Prints rows as an aligned text table. */
export function printTable(rows: readonly Row[]): void {
  const header = [
    'scenario',
    'measure',
    'gateway',
    'direct REST',
    'floor',
    'gateway / floor',
    'derived',
    'target',
  ];
  const lines = rows.map((r) => [
    r.scenario,
    r.measure,
    r.gateway,
    r.direct,
    r.floor ?? '',
    r.vsFloor ?? '',
    r.derived,
    r.target ? `${r.target.met ? 'MET' : 'MISSED'} (${r.target.goal})` : '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const format = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  console.log(format(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const line of lines) console.log(format(line));
}
