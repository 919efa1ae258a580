/**
 * The V1 record reader's shortcuts decide exactly as the code they skip: `hexId` on the app server's
 * own 32-hex form, and the agent server URL check on the usual `http://host:port/path` shape, compared
 * with the plain implementations (a regex; `new URL`) over tricky inputs and seeded random ones.
 */
import { describe, expect, it } from 'vitest';
import { isAbsoluteHttpUrl } from '../../src/upstream/v1/conversation-record.ts';
import { hexId } from '../../src/upstream/v1/ids.ts';

/** What the reader did before the shortcuts (src/upstream/v1/ids.ts, conversation-record.ts). */
const UUID_TEXT = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
function plainHexId(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const trimmed = raw.trim();
  return UUID_TEXT.test(trimmed) ? trimmed.replaceAll('-', '').toLowerCase() : null;
}
function plainIsAbsoluteHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A small seeded generator (mulberry32), so a failure names an input that can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

function text(next: () => number, alphabet: string, min: number, max: number): string {
  const length = min + Math.floor(next() * (max - min + 1));
  let out = '';
  for (let index = 0; index < length; index++) out += pick(next, [...alphabet]);
  return out;
}

const HEX = '0123456789abcdef0123456789abcdef';

describe('hexId', () => {
  it('answers as the regex did for ids of every shape', () => {
    const inputs: unknown[] = [
      HEX,
      HEX.toUpperCase(),
      ` ${HEX}`,
      `${HEX}\n`,
      HEX.slice(1),
      `${HEX}0`,
      `${HEX.slice(0, 31)}g`,
      `${HEX.slice(0, 8)}-${HEX.slice(8, 12)}-${HEX.slice(12, 16)}-${HEX.slice(16, 20)}-${HEX.slice(20)}`,
      `${HEX.slice(0, 8)}-${HEX.slice(8, 12)}${HEX.slice(12, 16)}-${HEX.slice(16, 20)}${HEX.slice(20)}`,
      `{${HEX}}`,
      '',
      '-'.repeat(32),
      null,
      undefined,
      42,
      { id: HEX },
      [HEX],
    ];
    const next = random(31);
    for (let n = 0; n < 20_000; n++) {
      const length = pick(next, [31, 32, 32, 32, 33, 35, 36, 37]);
      inputs.push(text(next, '0123456789abcdefABCDEF- g\t', length, length));
      inputs.push(text(next, '0123456789abcdef', 32, 32));
    }
    for (const input of inputs) expect([input, hexId(input)]).toEqual([input, plainHexId(input)]);
  });
});

describe('the agent server URL check', () => {
  it('accepts and refuses exactly what new URL with an http(s) scheme does', () => {
    const inputs = [
      'http://localhost:3000/api/conversations/0123456789abcdef0123456789abcdef',
      'http://127.0.0.1:40123/api/conversations/x',
      'https://agent.example.com/api/conversations/x',
      'https://runtime-1.prod.all-hands.dev',
      'HTTP://EXAMPLE.COM/',
      'hTTpS://Example.Com:443?x#y',
      'http:example.com',
      'http:/example.com',
      'http:\\\\example.com',
      'http://',
      'http:///x',
      'http://a b/',
      'http://a%20b/',
      'http://%41.com',
      'http://a%2eb',
      'http://xn--a/',
      'http://xn--nxasmq6b.com',
      'http://XN--a.com',
      'http://a.xn--zz',
      'http://ab--cd.com',
      'http://a---b.c',
      'http://-a.com',
      'http://a-.com',
      'http://a..b',
      'http://a.b.',
      'http://.a',
      'http://a.com.',
      'http://1.2.3.4',
      'http://1.2.3.256',
      'http://01.2.3.4',
      'http://08.1.1.1',
      'http://1.2.3',
      'http://1.2.3.4.5',
      'http://0x7f.1',
      'http://0x7f000001',
      'http://4294967295',
      'http://4294967296',
      'http://foo.123',
      'http://foo.0x1',
      'http://foo.0xg',
      'http://foo.1a',
      'http://1a',
      'http://a.1',
      'http://0.0.0.0',
      'http://255.255.255.255',
      'http://999.1.1.1',
      'http://a:65535',
      'http://a:65536',
      'http://a:99999',
      'http://a:00080',
      'http://a:000080',
      'http://a:',
      'http://a:/',
      'http://a:x',
      'http://u:p@a/',
      'http://@a',
      'http://[::1]:80/',
      'http://[::1',
      ' http://a/',
      'http://a/ ',
      '\thttp://a',
      'http://a\t.com',
      'http://a\n.com',
      'http://a\\b',
      'http://a_b.com',
      'http://a.b_c',
      'http://ä.com',
      'http://a.com/ä',
      'ftp://a',
      'ws://a',
      'file:///x',
      'javascript:alert(1)',
      'https://a?x',
      'https://a#x',
      `http://${'a'.repeat(300)}.com/`,
      `http://${'a.'.repeat(200)}com/`,
      '',
      'http',
      'https:',
    ];
    const next = random(13);
    for (let n = 0; n < 30_000; n++) {
      const prefix = pick(next, ['http://', 'https://', 'HTTP://', 'http:', 'http:/', 'htt://', '']);
      const host = text(next, 'aZ09-.xn_:@%[]/\\ \t8256', 0, 14);
      const suffix = pick(next, ['', '/', '/p', '?q', '#f', ':80', ':65536/', '\\', ' ', '.']);
      inputs.push(prefix + host + suffix);
    }
    // Hosts shaped like the shortcut's own: labels of letters, digits and hyphens, numbers with and
    // without leading zeros (dotted quads and the IPv4 forms the parser reads or refuses), ports.
    for (let n = 0; n < 30_000; n++) {
      const labels = Array.from({ length: 1 + Math.floor(next() * 5) }, () =>
        next() < 0.5
          ? pick(next, ['', '0', '00', '08', '0x', '0x1f']) + String(Math.floor(next() * 300))
          : text(next, 'aZ09-xn', 0, 6),
      );
      const scheme = pick(next, ['http://', 'https://', 'HtTpS://']);
      const port = pick(next, ['', ':', ':0', ':80', ':065535', ':65535', ':65536', ':123456']);
      const suffix = pick(next, ['', '/', '/api/x', '?q', '#f', 'x', '@', '.']);
      inputs.push(scheme + labels.join('.') + port + suffix);
    }
    for (const input of inputs) {
      expect([input, isAbsoluteHttpUrl(input)]).toEqual([input, plainIsAbsoluteHttpUrl(input)]);
    }
  });
});
