/**
 * The one conversion of upstream timestamps (conversation records and events alike) into the
 * gateway's `DateTime`: UTC with `Z`, the upstream's microseconds kept.
 *
 * Upstream event timestamps are written in the upstream server's local time with no zone designator
 * (`2025-08-14T12:00:00.123456`); records are meant to be UTC with `Z`, but an older release, a proxy
 * or another implementation may send an offset (`+02:00`) or no zone at all. A bare wall-clock time is
 * ambiguous, so the gateway reads it in one configured IANA time zone (`UPSTREAM_TIMEZONE`, default
 * `UTC`: the upstream's container images run in UTC). A timestamp with `Z` or an offset is converted.
 */

import { charCodeAt } from './char-code.ts';

declare const CHECKED_UTC: unique symbol;

/**
 * ISO 8601 UTC text with `Z` that was checked where it was made: by {@link upstreamTimestampToUtc}
 * (every upstream timestamp) or {@link utcOfDate} (the gateway's own clock). The DateTime scalar takes
 * only this type (src/schema/builder.ts), so it passes the text on without checking it again.
 */
export type UtcDateTime = string & { readonly [CHECKED_UTC]: true };

/** The UTC text of one of the gateway's own instants (years 0 to 9999, as a clock gives). */
export function utcOfDate(date: Date): UtcDateTime {
  return date.toISOString() as UtcDateTime;
}

const TIMESTAMP_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** One formatter per zone: building an Intl.DateTimeFormat is far costlier than using one. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** True when `timeZone` is an IANA zone name this runtime knows (for config validation). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Offset of `timeZone` from UTC at the instant `utcMs`, in milliseconds (positive east of Greenwich). */
function zoneOffsetMs(utcMs: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(utcMs))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const asUtc = Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  // formatToParts drops milliseconds; compare against the whole-second instant.
  return asUtc - Math.floor(utcMs / 1000) * 1000;
}

/**
 * Parses an upstream event timestamp into an instant. Zone-less values are read as wall-clock time in
 * `timeZone`; in a DST gap or overlap the earlier valid reading wins (the usual two-pass rule).
 * Fractions beyond milliseconds are truncated (JavaScript dates hold milliseconds).
 * Returns null for anything that is not an ISO 8601 date-time, so one odd event never breaks a stream.
 */
function parseUpstreamTimestamp(value: unknown, timeZone: string): Date | null {
  if (typeof value !== 'string') return null;
  const match = TIMESTAMP_PATTERN.exec(value);
  if (!match) return null;
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  const millis = Number((fraction ?? '').padEnd(3, '0').slice(0, 3));
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const wall = new Date(0);
  wall.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  wall.setUTCHours(Number(hour), Number(minute), Number(second ?? 0), millis);
  const wallMs = wall.getTime();
  // Date rolls 2025-13-45 over into a later valid date; a component that changed was out of range.
  if (
    Number.isNaN(wallMs) ||
    wall.getUTCFullYear() !== Number(year) ||
    wall.getUTCMonth() + 1 !== Number(month) ||
    wall.getUTCDate() !== Number(day) ||
    wall.getUTCHours() !== Number(hour) ||
    wall.getUTCMinutes() !== Number(minute)
  ) {
    return null;
  }
  if (zone) {
    if (zone === 'Z') return new Date(wallMs);
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2, 4));
    if (hours > 18 || minutes > 59) return null; // no zone is further from UTC than ±18:00
    const offsetMs = sign * (hours * 60 + minutes) * 60_000;
    return new Date(wallMs - offsetMs);
  }
  if (timeZone === 'UTC') return new Date(wallMs);
  const firstGuess = wallMs - zoneOffsetMs(wallMs, timeZone);
  const secondGuess = wallMs - zoneOffsetMs(firstGuess, timeZone);
  return new Date(secondGuess);
}

/**
 * Like {@link parseUpstreamTimestamp} but answers ISO 8601 UTC text with `Z`, keeping the upstream's
 * microsecond digits (zone offsets are whole minutes, so digits below the millisecond never change).
 * Null for anything unreadable: callers expose it as a nullable field rather than fail on it.
 */
export function upstreamTimestampToUtc(value: unknown, timeZone: string): UtcDateTime | null {
  if (typeof value === 'string') {
    const canonical = canonicalUtcText(value, timeZone);
    if (canonical !== null) return canonical as UtcDateTime;
  }
  const instant = parseUpstreamTimestamp(value, timeZone);
  if (instant === null || Number.isNaN(instant.getTime())) return null;
  // An offset can push year 0000 or 9999 out of four digits (toISOString would then write `-000001`
  // or `+010000`, which is not a DateTime); such an instant is unreadable, not an error.
  const year = instant.getUTCFullYear();
  if (year < 0 || year > 9999) return null;
  const fraction = TIMESTAMP_PATTERN.exec(value as string)?.[7] ?? '';
  const iso = instant.toISOString(); // always YYYY-MM-DDTHH:MM:SS.mmmZ
  return (fraction.length > 3 ? `${iso.slice(0, -1)}${fraction.slice(3)}Z` : iso) as UtcDateTime;
}

/**
 * What the conversation service writes: in records `toISOString()` (or Python's isoformat with
 * microseconds and `Z`), already the answer digit for digit; in events the same text without the `Z`
 * (wall-clock time), which read in UTC is the answer plus `Z`. Two regular expressions, a Date and
 * toISOString per value cost ~12% of the gateway's CPU on the list bench (40 timestamps per page) and
 * ~7% on the history bench (50 event timestamps per page), hence this path: one pattern that also
 * holds each field's range, and a look at the day only when it is above 28. A hand-written reader of
 * character codes did the same in 60-65 ns a timestamp where the pattern takes 36-39 (V8 compiles it
 * to machine code that reads each character once).
 */
const LETTER_Z = 90;
const DIGIT_0 = 48;

/** Canonical text, zoned or zone-less: three or more fraction digits, every field but the day's month in range. */
const CANONICAL_TEXT =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3,}Z?$/;
/**
 * The answer for canonical text (`YYYY-MM-DDTHH:MM:SS.fff…` with three or more fraction digits and an
 * optional `Z`) whose fields are in range: `value` when it ends in `Z`, `value` + `Z` for zone-less
 * text read in UTC. Null for anything else, which takes the full path (offsets, other zones, other
 * shapes, out-of-range fields). Exported for its test.
 */
export function canonicalUtcText(value: string, timeZone: string): string | null {
  if (!CANONICAL_TEXT.test(value)) return null;
  const zoned = charCodeAt(value, value.length - 1) === LETTER_Z;
  if (!zoned && timeZone !== 'UTC') return null;
  if (!dayInMonth(value)) return null;
  return zoned ? value : `${value}Z`;
}

/**
 * Whether the day of `text` (which the pattern above matched: days 01-31, months 01-12) is one its
 * month has in the proleptic Gregorian calendar. Days up to 28 are in every month.
 */
function dayInMonth(text: string): boolean {
  const day = digitAt(text, 8) * 10 + digitAt(text, 9);
  if (day <= 28) return true;
  const year = digitAt(text, 0) * 1000 + digitAt(text, 1) * 100 + digitAt(text, 2) * 10 + digitAt(text, 3);
  return day <= daysInMonth(year, digitAt(text, 5) * 10 + digitAt(text, 6));
}

/** The digit at `at` (which the caller's pattern already said is one). */
function digitAt(text: string, at: number): number {
  return charCodeAt(text, at) - DIGIT_0;
}

/** Days in a month of the proleptic Gregorian calendar (JavaScript's, year 0 included). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
