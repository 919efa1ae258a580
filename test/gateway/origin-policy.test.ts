/** OriginPolicy's comparisons (ports, IPv6, case, `null`), which the transport tests cannot all reach. */
import { describe, expect, it } from 'vitest';
import { defaultAllowedHosts, OriginPolicy } from '../../src/gateway/protection/origin-check.ts';

const code = (refusal: { code: string } | null) => refusal?.code ?? 'allowed';

describe('OriginPolicy.checkOrigin', () => {
  const policy = new OriginPolicy({ corsOrigins: ['https://app.example.com'] });

  it.each([
    [undefined, 'gw.example.com', 'allowed'],
    ['https://gw.example.com', 'gw.example.com', 'allowed'], // default port on both sides (TLS proxy)
    ['http://gw.example.com:80', 'gw.example.com', 'allowed'],
    ['HTTP://GW.example.com:4000', 'gw.example.com:4000', 'allowed'],
    ['http://[::1]:4000', '[::1]:4000', 'allowed'],
    ['https://app.example.com', 'gw.example.com', 'allowed'],
    ['https://APP.example.com', 'gw.example.com', 'allowed'],
    ['https://app.example.com:8443', 'gw.example.com', 'ORIGIN_REJECTED'],
    ['http://gw.example.com:4001', 'gw.example.com:4000', 'ORIGIN_REJECTED'],
    ['http://gw.example.com.evil.example:4000', 'gw.example.com:4000', 'ORIGIN_REJECTED'],
    ['null', 'gw.example.com', 'ORIGIN_REJECTED'],
    ['chrome-extension://abc', 'abc', 'ORIGIN_REJECTED'],
    ['https://gw.example.com', undefined, 'ORIGIN_REJECTED'],
  ])('Origin %s with Host %s: %s', (origin, host, expected) => {
    expect(code(policy.checkOrigin(origin, host))).toBe(expected);
  });

  it('allows any origin, `null` included, with CORS_ORIGINS=*', () => {
    const any = new OriginPolicy({ corsOrigins: ['*'] });
    expect(any.checkOrigin('null', 'gw')).toBeNull();
    expect(any.checkOrigin('https://evil.example', 'gw')).toBeNull();
  });
});

describe('OriginPolicy.checkHost', () => {
  it('compares host names without port, case or trailing dot; refuses a missing or malformed Host', () => {
    const policy = new OriginPolicy({ allowedHosts: ['gw.example.com', '::1'] });
    expect(code(policy.checkHost('GW.example.com.:4000'))).toBe('allowed');
    expect(code(policy.checkHost('[::1]:4000'))).toBe('allowed');
    expect(code(policy.checkHost('evil.example'))).toBe('HOST_REJECTED');
    expect(code(policy.checkHost(undefined))).toBe('HOST_REJECTED');
    expect(code(policy.checkHost('gw.example.com/path'))).toBe('HOST_REJECTED');
    expect(code(policy.checkHost('user@gw.example.com'))).toBe('HOST_REJECTED');
  });

  it('decides a Host seen before as the first time, also once many others pushed it out of the cache', () => {
    const allowed = ['gw.example.com', '::1', '127.0.0.1'];
    const policy = new OriginPolicy({ allowedHosts: allowed });
    /** The decision without the cache: the URL parse the policy makes for a Host it has not seen. */
    const plain = (host: string) => {
      try {
        const url = new URL(`http://${host.trim()}`);
        if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return false;
        return allowed.includes(
          url.hostname
            .toLowerCase()
            .replace(/^\[(.*)\]$/, '$1')
            .replace(/\.$/, ''),
        );
      } catch {
        return false;
      }
    };
    const hosts = [
      'gw.example.com',
      'GW.EXAMPLE.COM:4000',
      ' gw.example.com ',
      'gw.example.com.',
      'gw.example.com:99999',
      'gw.example.com:',
      'gw.example.com/x',
      'gw.example.com?x',
      'gw.example.com#x',
      'u:p@gw.example.com',
      '[::1]',
      '[::1]:80',
      '[::1',
      '::1',
      '127.0.0.1:4000',
      '127.1',
      '0x7f.0.0.1',
      'gw.example.com.evil.example',
      '',
      ' ',
      'gw example.com',
    ];
    for (let round = 0; round < 3; round++) {
      for (const host of hosts) expect([host, policy.checkHost(host) === null]).toEqual([host, plain(host)]);
      // Made-up Hosts, more than the cache holds: the ones above are read anew next round.
      for (let n = 0; n < 300; n++)
        expect(code(policy.checkHost(`made-up-${round}-${n}.example`))).toBe('HOST_REJECTED');
    }
  });

  it('defaults: loopback plus the listen host when listening on loopback or with a default key; else off', () => {
    // Listening on loopback: on with or without a key (the quick start's embedded service needs none).
    expect(defaultAllowedHosts(false, '127.0.0.1')).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(defaultAllowedHosts(false, 'localhost')).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(defaultAllowedHosts(false, '[::1]')).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(defaultAllowedHosts(false, '127.0.0.2')).toEqual(['localhost', '127.0.0.1', '::1', '127.0.0.2']);
    // Not loopback and no key: every caller brings its own key, so no page can act with the gateway's.
    expect(defaultAllowedHosts(false, '0.0.0.0')).toBeNull();
    expect(defaultAllowedHosts(false, '::')).toBeNull();
    expect(defaultAllowedHosts(false, '10.1.2.3')).toBeNull();
    expect(defaultAllowedHosts(false, '127.example.com')).toBeNull();
    expect(defaultAllowedHosts(true, '0.0.0.0')).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(defaultAllowedHosts(true, 'gw.internal')).toEqual([
      'localhost',
      '127.0.0.1',
      '::1',
      'gw.internal',
    ]);
    expect(new OriginPolicy({ allowedHosts: ['*'] }).checksHost).toBe(false);
  });
});
