/** The transport settings (Host check, request deadlines, SSE stall cut, streams per credential). */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('transport settings', () => {
  it('reads each from its flag or env variable', () => {
    const config = loadConfig(['--headers-timeout-ms', '2000', '--streams-per-credential', '7'], {
      ALLOWED_HOSTS: 'gateway.example.com, [::1],10.0.0.5',
      REQUEST_TIMEOUT_MS: '5000',
      SSE_STALL_TIMEOUT_MS: '0',
      HEADERS_TIMEOUT_MS: '9999',
    });
    expect(config.hardening).toMatchObject({
      allowedHosts: ['gateway.example.com', '[::1]', '10.0.0.5'],
      headersTimeoutMs: 2000,
      requestTimeoutMs: 5000,
      sseStallTimeoutMs: 0,
      maxStreamsPerCredential: 7,
    });
  });

  it.each([
    [{ ALLOWED_HOSTS: 'https://gateway.example.com' }, 'ALLOWED_HOSTS'],
    [{ ALLOWED_HOSTS: 'gateway.example.com:4000' }, 'ALLOWED_HOSTS'],
    [{ HEADERS_TIMEOUT_MS: '5' }, 'HEADERS_TIMEOUT_MS'],
    [{ HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' }, 'REQUEST_TIMEOUT_MS'],
    [{ MAX_STREAMS_PER_CREDENTIAL: '-1' }, 'MAX_STREAMS_PER_CREDENTIAL'],
  ])('refuses %j naming %s', (env, setting) => {
    expect(() => loadConfig([], env)).toThrow(ConfigError);
    expect(() => loadConfig([], env)).toThrow(setting);
  });

  it('lets a request deadline of 0 (off) go with any header deadline', () => {
    expect(loadConfig([], { REQUEST_TIMEOUT_MS: '0' }).hardening.requestTimeoutMs).toBe(0);
  });
});
