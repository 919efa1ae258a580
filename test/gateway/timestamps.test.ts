/**
 * The one timestamp conversion (records and events) at its edges, and the DateTime scalar's "always Z"
 * promise for whatever a resolver hands it. End-to-end behaviour is in hostile-upstream.test.ts and
 * the property test; these are the corners a random instant rarely hits.
 */
import { describe, expect, it } from 'vitest';
import { DateTimeScalar } from '../../src/schema/scalars.ts';
import { upstreamTimestampToUtc } from '../../src/upstream/timestamps.ts';

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

describe('DateTime scalar', () => {
  it('serialises UTC text as is and converts an offset to Z', () => {
    expect(DateTimeScalar.serialize('2025-08-14T11:30:44.142725Z')).toBe('2025-08-14T11:30:44.142725Z');
    expect(DateTimeScalar.serialize('2025-08-14T13:30:44.142725+02:00')).toBe('2025-08-14T11:30:44.142725Z');
  });

  it('refuses a zone-less value instead of guessing its zone', () => {
    expect(() => DateTimeScalar.serialize('2025-08-14T00:51:04')).toThrow(/without a zone/);
  });
});
