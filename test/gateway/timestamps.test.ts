/**
 * The one timestamp conversion (records and events) at its edges, and the DateTime scalar's "always Z"
 * promise for whatever a resolver hands it. End-to-end behaviour is in hostile-upstream.test.ts and
 * the property test; these are the corners a random instant rarely hits.
 */
import { describe, expect, it } from 'vitest';
import { DateTimeScalar } from '../../src/schema/scalars.ts';
import { canonicalUtcText, upstreamTimestampToUtc } from '../../src/upstream/timestamps.ts';

describe('upstreamTimestampToUtc', () => {
  it('converts offsets with and without a colon, keeping digits below the millisecond', () => {
    expect(upstreamTimestampToUtc('2025-08-14T13:30:44.142725+02:00', 'UTC')).toBe(
      '2025-08-14T11:30:44.142725Z',
    );
    expect(upstreamTimestampToUtc('2025-08-14T13:30:44.142725-0530', 'UTC')).toBe(
      '2025-08-14T19:00:44.142725Z',
    );
    expect(upstreamTimestampToUtc('2025-12-31T23:30:00.5-01:00', 'Asia/Tokyo')).toBe(
      '2026-01-01T00:30:00.500Z',
    );
  });

  it('reads years below 100 as written (Date.UTC would make 0050 into 1950)', () => {
    expect(upstreamTimestampToUtc('0050-03-01T00:00:00Z', 'UTC')).toBe('0050-03-01T00:00:00.000Z');
  });

  it('answers null, never a non-DateTime, for offsets no zone has or instants beyond four-digit years', () => {
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00+25:00', 'UTC')).toBeNull();
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00+05:75', 'UTC')).toBeNull();
    expect(upstreamTimestampToUtc('9999-12-31T23:00:00-05:00', 'UTC')).toBeNull();
    expect(upstreamTimestampToUtc('0000-01-01T00:30:00+01:00', 'UTC')).toBeNull();
    expect(upstreamTimestampToUtc(20250814, 'UTC')).toBeNull();
  });

  it('passes canonical UTC text through as is, and still refuses one whose fields are out of range', () => {
    for (const value of [
      '2024-02-29T23:59:59.999Z',
      '2000-02-29T00:00:00.000Z',
      '0000-02-29T12:00:00.123456Z',
      '2025-08-14T12:00:00.123456789Z',
    ]) {
      expect(upstreamTimestampToUtc(value, 'Asia/Tokyo')).toBe(value);
    }
    for (const value of [
      '2025-02-29T00:00:00.000Z',
      '1900-02-29T00:00:00.000Z',
      '2025-04-31T00:00:00.000Z',
      '2025-13-01T00:00:00.000Z',
      '2025-00-10T00:00:00.000Z',
      '2025-01-00T00:00:00.000Z',
      '2025-01-01T24:00:00.000Z',
      '2025-01-01T23:60:00.000Z',
      '2025-01-01T23:59:60.000Z',
    ]) {
      expect(upstreamTimestampToUtc(value, 'UTC')).toBeNull();
    }
  });

  it('reads zone-less text (event timestamps) as wall-clock time: plus Z in UTC, converted in another zone', () => {
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00.123456', 'UTC')).toBe('2025-08-14T12:00:00.123456Z');
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00.123456', 'Asia/Tokyo')).toBe(
      '2025-08-14T03:00:00.123456Z',
    );
    expect(upstreamTimestampToUtc('2025-02-29T12:00:00.123456', 'UTC')).toBeNull();
    expect(upstreamTimestampToUtc('2025-01-01T23:59:60.000', 'UTC')).toBeNull();
  });

  it('answers exactly what toISOString writes for any instant it wrote', () => {
    for (let i = 0; i < 2000; i++) {
      const iso = new Date(Math.floor(Math.random() * 253402300799999)).toISOString();
      expect(upstreamTimestampToUtc(iso, 'UTC')).toBe(iso);
      expect(upstreamTimestampToUtc(iso.replace('Z', '+00:00'), 'UTC')).toBe(iso);
      // Zone-less, as events carry them, with microseconds.
      expect(upstreamTimestampToUtc(iso.replace('Z', '417'), 'UTC')).toBe(iso.replace('Z', '417Z'));
    }
  });
});

/**
 * The canonical-text check against a plain pattern plus a range check of each field, on every
 * one-character change of a set of timestamps (each position set to each character that matters, or
 * cut, or doubled), each in the string representations V8 makes of upstream text.
 */
describe('the canonical-text check', () => {
  const OLD_CANONICAL_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3,}Z?$/;
  /** Days in a month, from the calendar itself: day 0 of the next month is this one's last. */
  const daysIn = (year: number, month: number) => {
    const lastDay = new Date(0);
    lastDay.setUTCFullYear(year, month, 0);
    return lastDay.getUTCDate();
  };
  const fieldsInRange = (text: string) => {
    const [year, month, day, hour, minute, second] = [0, 5, 8, 11, 14, 17].map((at, index) =>
      Number(text.slice(at, index === 0 ? 4 : at + 2)),
    ) as [number, number, number, number, number, number];
    return (
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= daysIn(year, month) &&
      hour <= 23 &&
      minute <= 59 &&
      second <= 59
    );
  };
  const oldCanonicalUtcText = (text: string, timeZone: string) => {
    if (!OLD_CANONICAL_TEXT.test(text)) return null;
    const zoned = text.endsWith('Z');
    if (!zoned && timeZone !== 'UTC') return null;
    return fieldsInRange(text) ? (zoned ? text : `${text}Z`) : null;
  };
  const bases = [
    '2025-08-14T12:00:00.123456Z',
    '2025-08-14T12:00:00.123',
    '2024-02-29T23:59:59.999Z',
    '2023-02-28T00:00:00.5Z',
    '0000-12-31T00:00:00Z',
    '1999-04-30T09:09:09.123456789Z',
  ];
  const characters = [
    '0',
    '1',
    '2',
    '3',
    '4',
    '5',
    '6',
    '8',
    '9',
    '-',
    ':',
    'T',
    't',
    'Z',
    '.',
    ' ',
    '+',
    'a',
    '/',
    '\n',
  ];
  const variants = new Set<string>(['', 'Z', '.', '2025']);
  for (const base of bases) {
    for (let at = 0; at <= base.length; at++) {
      for (const character of characters) variants.add(base.slice(0, at) + character + base.slice(at + 1));
      variants.add(base.slice(0, at) + base.slice(at + 1));
      variants.add(base.slice(0, at) + base.charAt(at) + base.slice(at));
    }
  }
  // Parsed, internalized (a property key), sliced and concatenated: each a string map of its own.
  const representations = (text: string) => [
    (JSON.parse(JSON.stringify([text])) as string[])[0] as string,
    Object.keys({ [text]: true })[0] as string,
    `#${text}#`.slice(1, -1),
    text.slice(0, 3) + text.slice(3),
  ];

  it('canonicalUtcText answers what the pattern and the range check answered', () => {
    expect(variants.size).toBeGreaterThan(1000);
    for (const variant of variants) {
      for (const text of representations(variant)) {
        for (const timeZone of ['UTC', 'Europe/Paris']) {
          expect([text, timeZone, canonicalUtcText(text, timeZone)]).toEqual([
            text,
            timeZone,
            oldCanonicalUtcText(text, timeZone),
          ]);
        }
      }
    }
  });
});

describe('DateTime scalar', () => {
  it('serialises UTC text as is (checked where it was made) and converts an offset to Z', () => {
    expect(DateTimeScalar.serialize('2025-08-14T11:30:44.142725Z')).toBe('2025-08-14T11:30:44.142725Z');
    expect(DateTimeScalar.serialize('2025-08-14T13:30:44.142725+02:00')).toBe('2025-08-14T11:30:44.142725Z');
  });

  it('refuses a zone-less value instead of guessing its zone', () => {
    expect(() => DateTimeScalar.serialize('2025-08-14T00:51:04')).toThrow(/without a zone/);
  });
});
