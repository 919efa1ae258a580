/** The Redis settings: flags and env, and start-up errors that name the setting without echoing a secret. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('Redis settings', () => {
  it('reads REDIS_URL / --redis and the others from env and flags (flags win)', () => {
    const config = loadConfig(['--redis', 'redis://flag:6379', '--redis-timeout-ms', '80'], {
      REDIS_URL: 'redis://env:6379',
      REDIS_REPLICAS_HINT: '3',
      REDIS_KEY_SALT: 'a-salt-of-sixteen-chars',
      APQ_REDIS_TTL_SECONDS: '600',
    });
    expect(config.shared).toEqual({
      redisUrl: 'redis://flag:6379',
      redisTimeoutMs: 80,
      redisReplicasHint: 3,
      redisKeySalt: 'a-salt-of-sixteen-chars',
      apqRedisTtlSeconds: 600,
    });
  });

  it('refuses a non-Redis URL, a short salt and a zero replica count, naming the setting and never the password', () => {
    const attempt = (argv: string[], env: Record<string, string>) => {
      try {
        loadConfig(argv, env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    const wrongScheme = attempt([], { REDIS_URL: 'http://:hunter2secret@cache:6379' });
    expect(wrongScheme).toBe('Invalid REDIS_URL: must be a redis:// or rediss:// URL');
    expect(attempt(['--redis', 'not a url :hunter2secret'], {})).toBe('Invalid --redis: not a URL');
    expect(attempt([], { REDIS_KEY_SALT: 'short' })).toBe(
      'Invalid REDIS_KEY_SALT: must be at least 16 characters',
    );
    expect(attempt([], { REDIS_REPLICAS_HINT: '0' })).toMatch(
      /^Invalid REDIS_REPLICAS_HINT: expected 1\.\.10000/,
    );
  });
});
