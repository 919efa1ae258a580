/**
 * bench/results/latest.json: what one run writes, and how a partial run (`--only`, or `--api` naming
 * fewer APIs) folds its scenarios into the file instead of replacing it, so the other scenarios' rows,
 * figures and ratios stay as the run that measured them left them. A full run replaces the file.
 *
 * Scenarios are keyed as the table names them: the runner's name on V0 (`list`, `fanout`), with the
 * API on V1 (`list (v1)`, bench-api.ts). Each row carries the key it belongs to (`of`), and `sources`
 * says which command and start time measured each key.
 */
import { existsSync, readFileSync } from 'node:fs';
import { BENCH_APIS, type BenchApi, named } from './bench-api.ts';
import type { Row, ScenarioResult } from './report.ts';

/** One scenario as measured on one API. */
export interface MeasuredScenario {
  api: BenchApi;
  result: ScenarioResult;
}

/** Which run measured a scenario key. */
interface Source {
  command: string;
  startedAt: string;
}

/** A row as written: the table's row plus the scenario key it belongs to. */
type WrittenRow = Row & { of?: string };

/** The file's shape (older files lack `sources` and the rows' `of`). */
export interface ResultsFile {
  command: string;
  startedAt: string;
  machine: Record<string, unknown>;
  rows: WrittenRow[];
  vsFloor: Record<string, unknown>;
  scenarios: Record<string, unknown>;
  sources?: Record<string, Source>;
}

/** Rows of a file written before rows carried `of`: their scenario key from the row's label. */
function legacyKey(label: string): string {
  if (label === 'list, 2 workers' || /^list, \d+ workers$/.test(label)) return 'workers';
  if (label.startsWith('lookups')) return 'lookups';
  if (label.startsWith('fan-out ')) return 'fanout';
  if (label.startsWith('many ')) return 'many-conversations';
  if (label === 'cold start') return 'cold-start';
  if (label.startsWith('fairness')) return 'fairness';
  return label;
}

/** The `vsFloor` entries a scenario's details carry (one, or one per fan-out size). */
function floorRatios(base: string, api: BenchApi, details: unknown): Array<[string, unknown]> {
  if (Array.isArray(details)) {
    return details.flatMap((d: { subscribers?: number; vsFloor?: unknown }) =>
      d.vsFloor ? [[named(`${base} ${d.subscribers}`, api), d.vsFloor] as [string, unknown]] : [],
    );
  }
  const vsFloor = (details as { vsFloor?: Record<string, unknown> } | null)?.vsFloor;
  return vsFloor && Object.keys(vsFloor).length > 0 ? [[named(base, api), vsFloor]] : [];
}

/** A key's runner name and API: `fanout (v1)` -> fanout on v1. */
function parseKey(key: string): { base: string; api: BenchApi } {
  for (const api of BENCH_APIS) {
    const suffix = named('', api);
    if (api !== 'v0' && key.endsWith(suffix)) return { base: key.slice(0, -suffix.length), api };
  }
  return { base: key, api: 'v0' };
}

/**
 * The file this run writes. `previous` (the file at the output path, or null) is merged in when the
 * run is `partial`; `order` lists the runner names in the order the table shows them.
 */
export function resultsFile(
  run: { command: string; startedAt: string; machine: Record<string, unknown>; partial: boolean },
  measured: readonly MeasuredScenario[],
  order: readonly string[],
  previous: ResultsFile | null,
): ResultsFile {
  const rows = new Map<string, WrittenRow[]>();
  const details = new Map<string, unknown>();
  const sources = new Map<string, Source>();
  if (run.partial && previous) {
    for (const row of previous.rows) {
      const key = row.of ?? legacyKey(row.scenario);
      rows.set(key, [...(rows.get(key) ?? []), { ...row, of: key }]);
    }
    for (const [key, value] of Object.entries(previous.scenarios)) details.set(key, value);
    for (const key of new Set([...rows.keys(), ...details.keys()])) {
      sources.set(
        key,
        previous.sources?.[key] ?? { command: previous.command, startedAt: previous.startedAt },
      );
    }
  }
  for (const { api, result } of measured) {
    const key = named(result.name, api);
    rows.set(
      key,
      result.rows.map((row) => ({ ...row, of: key })),
    );
    details.set(key, result.details);
    sources.set(key, { command: run.command, startedAt: run.startedAt });
  }
  // Table order: the runner's order, each scenario's APIs together; anything unknown last.
  const rank = (key: string) => {
    const { base, api } = parseKey(key);
    const at = order.indexOf(base);
    return (at < 0 ? order.length : at) * BENCH_APIS.length + BENCH_APIS.indexOf(api);
  };
  const keys = [...new Set([...rows.keys(), ...details.keys()])].sort((a, b) => rank(a) - rank(b));
  return {
    command: run.command,
    startedAt: run.startedAt,
    machine: run.machine,
    rows: keys.flatMap((key) => rows.get(key) ?? []),
    // gateway / floor per scenario (the floors are bench/floors/; raw figures are under scenarios.*).
    vsFloor: Object.fromEntries(
      keys.flatMap((key) => {
        const { base, api } = parseKey(key);
        return details.has(key) ? floorRatios(base, api, details.get(key)) : [];
      }),
    ),
    scenarios: Object.fromEntries(
      keys.filter((key) => details.has(key)).map((key) => [key, details.get(key)]),
    ),
    sources: Object.fromEntries(
      keys.flatMap((key) => {
        const source = sources.get(key);
        return source ? [[key, source] as const] : [];
      }),
    ),
  };
}

/** The results file at `path`, or null when there is none (or it does not parse). */
export function readResultsFile(path: string): ResultsFile | null {
  if (!existsSync(path)) return null;
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<ResultsFile>;
    return Array.isArray(parsed.rows) && parsed.scenarios ? (parsed as ResultsFile) : null;
  } catch {
    return null;
  }
}
