import { describe, expect, it, onTestFinished } from 'vitest';
import { createRateLimiter } from '../../src/local-service/rate-limit.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';

/** A limiter closed when the test finishes. */
function limiterForTest(options?: Parameters<typeof createRateLimiter>[0]) {
  const limiter = createRateLimiter(options);
  onTestFinished(() => limiter.close());
  return limiter;
}

describe('rate limiter', () => {
  it('allows 10 per window, delays 11..20, rejects beyond, per client, and forgets after the window', () => {
    let t = 1_000;
    const limiter = limiterForTest({ now: () => t });
    const decisions = Array.from({ length: 22 }, () => limiter.check('1.2.3.4').action);
    expect(decisions.slice(0, 10).every((d) => d === 'allow')).toBe(true);
    expect(decisions.slice(10, 20).every((d) => d === 'delay')).toBe(true);
    expect(decisions.slice(20)).toEqual(['reject', 'reject']);
    expect(limiter.check('5.6.7.8').action).toBe('allow');
    t += 1_001;
    expect(limiter.check('1.2.3.4').action).toBe('allow');
  });

  it('close() releases pending waits at once', async () => {
    const limiter = limiterForTest();
    // Without the release this waits a minute and the test times out.
    const waiting = limiter.wait(60_000);
    limiter.close();
    await expect(waiting).resolves.toBeUndefined();
  });
});

describe('rate limiting over HTTP', () => {
  it('is off by default', async () => {
    const service = await localServiceForTest();
    const url = service.url;
    const statuses = await Promise.all(
      Array.from({ length: 30 }, () => rest(url, '/health').then((r) => r.status)),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it('when on: a burst of 25 gets 5 answers 429 with Retry-After: 1, the rest 200 (some delayed)', async () => {
    const service = await localServiceForTest({ rateLimit: true });
    const url = service.url;
    const results = await Promise.all(Array.from({ length: 25 }, () => rest(url, '/api/conversations')));
    const rejected = results.filter((r) => r.status === 429);
    expect(rejected).toHaveLength(5);
    for (const r of rejected) {
      expect(r.body).toEqual({ message: 'Too many requests' });
      expect(r.headers.get('retry-after')).toBe('1');
    }
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
  });
});
