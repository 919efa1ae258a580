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
