/**
 * Reads the query parameters of the V1 routes as FastAPI and pydantic v2 would, collecting every
 * problem as a 422 item: ints (with `gt`), booleans (pydantic's words), enums, UUIDs (any form ->
 * 32 hex) and datetimes (ISO 8601, with or without a zone). What each route does with an over-large
 * `limit` (the `lte` trap: a 500 at app main) is the route's business, not this reader's.
 */
import { expectedEnumText, issue, missingIssue, type ValidationIssue } from '../validation/issue.ts';
import { parseIntStrict } from '../validation/strict-int.ts';
import { uuidHex } from './conversation-state.ts';
import { naiveLocalIso } from './event-factory.ts';

const TRUE_WORDS = ['1', 'on', 't', 'true', 'y', 'yes'];
const FALSE_WORDS = ['0', 'off', 'f', 'false', 'n', 'no'];

const ISO_DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** A datetime as given: with its zone (`aware`) or without. */
export interface QueryDatetime {
  aware: boolean;
  /** The instant, a naive value read as UTC (the app server's reading of zone-less values). */
  utc: Date;
  /** The instant, a naive value read as server local time (the agent server's reading). */
  local: Date;
  /** The agent server's reading as the text its naive timestamps compare with (microseconds kept). */
  localText: string;
}

/** pydantic's reason a UUID string does not parse (the part after "Input should be a valid UUID, "). */
function uuidProblem(text: string): string {
  const body = text.replace(/^urn:uuid:/i, '');
  const bad = [...body].findIndex((ch) => !/[0-9a-fA-F-]/.test(ch));
  if (bad >= 0) {
    return `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${body[bad]}\` at ${bad + 1}`;
  }
  return `invalid length: expected length 32 for simple format, found ${body.replaceAll('-', '').length}`;
}

/** A 422 item for a value that is no UUID, at `loc`. */
export function uuidIssue(loc: Array<string | number>, text: string): ValidationIssue {
  const problem = uuidProblem(text);
  return issue('uuid_parsing', loc, `Input should be a valid UUID, ${problem}`, text, { error: problem });
}

/** Parses one ISO datetime, undefined when pydantic would refuse it. */
export function parseDatetime(text: string): QueryDatetime | undefined {
  const m = ISO_DATETIME.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  const micro = Number(frac.padEnd(6, '0'));
  const parts = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms] as const;
  const utcMs = Date.UTC(...parts);
  if (Number.isNaN(utcMs) || new Date(utcMs).getUTCDate() !== Number(d)) return undefined;
  if (zone === undefined) {
    const local = new Date(...parts);
    return { aware: false, utc: new Date(utcMs), local, localText: localIso(local, micro) };
  }
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
  }
  const instant = new Date(utcMs - offsetMin * 60_000);
  return { aware: true, utc: instant, local: instant, localText: localIso(instant, micro) };
}

/** `isoformat()` of a naive local datetime: the instant's local second plus `micro`. */
function localIso(date: Date, micro: number): string {
  return naiveLocalIso(Math.floor(date.getTime() / 1000) * 1_000_000 + micro);
}

/** Collects a route's query values and the 422 items of those that do not parse. */
export class QueryReader {
  readonly issues: ValidationIssue[] = [];

  constructor(private readonly params: URLSearchParams) {}

  string(name: string): string | null {
    return this.params.get(name);
  }

  /** A required value (`Query(...)`): absent is a 422 `missing`, answered as `''`. */
  required(name: string): string {
    const text = this.params.get(name);
    if (text === null) this.issues.push(missingIssue(['query', name]));
    return text ?? '';
  }

  /** An optional value that must match `pattern` (`Query(pattern=...)`): else a 422 `string_pattern_mismatch`. */
  matching(
    name: string,
    pattern: RegExp,
    loc: 'query' | 'path' = 'query',
    value = this.params.get(name),
  ): string | null {
    if (value === null || pattern.test(value)) return value;
    const msg = `String should match pattern '${pattern.source}'`;
    this.issues.push(issue('string_pattern_mismatch', [loc, name], msg, value, { pattern: pattern.source }));
    return null;
  }

  int(name: string, fallback: number, bounds: { gt?: number; ge?: number; le?: number } = {}): number {
    const text = this.params.get(name);
    if (text === null) return fallback;
    const parsed = parseIntStrict(text);
    if (parsed === undefined) {
      const msg = 'Input should be a valid integer, unable to parse string as an integer';
      this.issues.push(issue('int_parsing', ['query', name], msg, text));
      return fallback;
    }
    if (bounds.gt !== undefined && parsed <= bounds.gt) {
      const msg = `Input should be greater than ${bounds.gt}`;
      this.issues.push(issue('greater_than', ['query', name], msg, text, { gt: bounds.gt }));
      return fallback;
    }
    if (bounds.ge !== undefined && parsed < bounds.ge) {
      const msg = `Input should be greater than or equal to ${bounds.ge}`;
      this.issues.push(issue('greater_than_equal', ['query', name], msg, text, { ge: bounds.ge }));
      return fallback;
    }
    if (bounds.le !== undefined && parsed > bounds.le) {
      const msg = `Input should be less than or equal to ${bounds.le}`;
      this.issues.push(issue('less_than_equal', ['query', name], msg, text, { le: bounds.le }));
      return fallback;
    }
    return parsed;
  }

  bool(name: string, fallback: boolean): boolean {
    const text = this.params.get(name);
    if (text === null) return fallback;
    const word = text.toLowerCase();
    if (TRUE_WORDS.includes(word)) return true;
    if (FALSE_WORDS.includes(word)) return false;
    const msg = 'Input should be a valid boolean, unable to interpret input';
    this.issues.push(issue('bool_parsing', ['query', name], msg, text));
    return fallback;
  }

  enumValue<T extends string>(name: string, values: readonly T[], fallback: T): T;
  enumValue<T extends string>(name: string, values: readonly T[], fallback: null): T | null;
  enumValue<T extends string>(name: string, values: readonly T[], fallback: T | null): T | null {
    const text = this.params.get(name);
    if (text === null) return fallback;
    if ((values as readonly string[]).includes(text)) return text as T;
    const expected = expectedEnumText(values);
    this.issues.push(issue('enum', ['query', name], `Input should be ${expected}`, text, { expected }));
    return fallback;
  }

  uuid(name: string): string | null {
    const text = this.params.get(name);
    if (text === null) return null;
    const hex = uuidHex(text);
    if (hex === undefined) this.issues.push(uuidIssue(['query', name], text));
    return hex ?? null;
  }

  /** Every value of a repeated UUID parameter, as 32 hex (`required`: missing is a 422). */
  uuids(name: string, required: boolean): string[] {
    const values = this.params.getAll(name);
    if (values.length === 0 && required) this.issues.push(missingIssue(['query', name]));
    return values.map((text, i) => {
      const hex = uuidHex(text);
      if (hex === undefined) this.issues.push(uuidIssue(['query', name, i], text));
      return hex ?? '';
    });
  }

  datetime(name: string): QueryDatetime | null {
    const text = this.params.get(name);
    if (text === null) return null;
    const parsed = parseDatetime(text);
    if (parsed === undefined) {
      const msg = 'Input should be a valid datetime or date, invalid character in year';
      this.issues.push(
        issue('datetime_from_date_parsing', ['query', name], msg, text, {
          error: 'invalid character in year',
        }),
      );
      return null;
    }
    return parsed;
  }
}
