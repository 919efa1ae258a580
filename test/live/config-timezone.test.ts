/**
 * The upstream time zone setting: default UTC, flag over env, unknown zones refused by name.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('upstream time zone setting', () => {
  it('defaults to UTC and takes the flag over the env', () => {
    expect(loadConfig([], {}).upstreamTimeZone).toBe('UTC');
    expect(loadConfig([], { UPSTREAM_TIMEZONE: 'Europe/Berlin' }).upstreamTimeZone).toBe('Europe/Berlin');
    expect(
      loadConfig(['--upstream-timezone', 'Asia/Tokyo'], { UPSTREAM_TIMEZONE: 'Europe/Berlin' })
        .upstreamTimeZone,
    ).toBe('Asia/Tokyo');
  });

  it('refuses a zone the runtime does not know, naming the setting', () => {
    expect(() => loadConfig([], { UPSTREAM_TIMEZONE: 'Mars/Olympus' })).toThrow(ConfigError);
    expect(() => loadConfig(['--upstream-timezone', 'nowhere'], {})).toThrow(/--upstream-timezone/);
  });
});
