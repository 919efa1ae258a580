/**
 * Event cursors are kept by clients, so a token must never change: sealEventCursor
 * (src/upstream/port/event-cursor.ts) gives, byte for byte, what the first implementation gave,
 * base64url of `JSON.stringify([1, api, ...parts])`, for every id an upstream may send (unicode,
 * quotes, control characters, lone surrogates, ids long enough to leave the reused buffer).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type EventPosition,
  eventCursorSealer,
  openEventCursor,
  sealEventCursor,
} from '../../src/upstream/port/event-cursor.ts';
import { v0Cursor } from '../../src/upstream/v0/event-cursor.ts';
import { BEFORE_FIRST_CURSOR, v1Cursor } from '../../src/upstream/v1/event-cursor.ts';

/** The seal as first written, the reference every token must keep matching. */
const firstSeal = (position: EventPosition): string =>
  Buffer.from(JSON.stringify([1, position.api, ...position.parts])).toString('base64url');

const ODD_IDS = [
  '',
  ' ',
  '"',
  '\\',
  '"\\"',
  '\n',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u00e9t\u00e9',
  '\u2028\u2029',
  '\ud7ff',
  '\ue000',
  '\uffff',
  '\ud83d\ude00',
  '\ud800',
  '\udc00',
  'a\ud800b',
  '\ude00\ud83d',
  '</script>',
  '5b2c1f0e-0000-4000-8000-000000000001',
  'x'.repeat(682),
  'x'.repeat(683),
  '\u20ac'.repeat(682),
  '\u20ac'.repeat(700),
  '\ud83d\ude00'.repeat(400),
  'y'.repeat(5000),
];

describe('sealEventCursor', () => {
  it('seals known positions as the documented tokens', () => {
    expect(v0Cursor(-1)).toBe('WzEsInYwIiwtMV0');
    expect(v0Cursor(42)).toBe(Buffer.from('[1,"v0",42]').toString('base64url'));
    expect(BEFORE_FIRST_CURSOR).toBe('WzEsInYxIiwiIiwiIiwiIl0');
    expect(v1Cursor({ id: 'a"b', timestamp: '2026-05-01T10:00:00.25', kind: 'MessageEvent' })).toBe(
      Buffer.from('[1,"v1","a\\"b","2026-05-01T10:00:00.25","MessageEvent"]').toString('base64url'),
    );
  });

  it("gives the first implementation's token for odd ids and numbers", () => {
    for (const id of ODD_IDS) {
      for (const position of [
        { api: 'v1', parts: [id, '2026-05-01T10:00:00.250000', 'MessageEvent'] },
        { api: 'v1', parts: ['', id, id] },
        { api: id, parts: [] },
      ]) {
        expect(sealEventCursor(position), JSON.stringify(position)).toBe(firstSeal(position));
      }
    }
    const numbers = [-1, 0, -0, 1, 999_999_999_999_999, 2 ** 53, 1e21, 1.5, -1e-7, Number.NaN, Infinity];
    for (const number of numbers) {
      const position = { api: 'v0', parts: [number] };
      expect(sealEventCursor(position), String(number)).toBe(firstSeal(position));
    }
  });

  it("gives the first implementation's token for any position", () => {
    // 'binary' never yields a lone surrogate: these units do, with the characters JSON escapes.
    const oddUnit = fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\ud800', '\udc00', '\u00e9', '\u20ac');
    const part = fc.oneof(
      fc.string({ unit: oddUnit, maxLength: 20 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: 'grapheme', maxLength: 30 }),
      fc.string({ unit: 'binary', minLength: 600, maxLength: 800 }),
      fc.integer(),
      fc.double(),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 4 }), fc.array(part, { maxLength: 4 }), (api, parts) => {
        const position = { api, parts };
        expect(sealEventCursor(position)).toBe(firstSeal(position));
      }),
      { numRuns: 3000, seed: 31 },
    );
  });

  it("seals every V0 id and V1 place as the first implementation did (the adapters' own sealers)", () => {
    // V0's rest after the head (`",42]`) is encoded in JS up to 24 characters: every length up to and
    // past that, each remainder modulo 3, negative, huge and non-integer numbers.
    const ids = [-1, 0, 7, 42, 999, 1000, 99_999, 999_999_999_999_999, 2 ** 53, 1e21, -1e-7, 1.5, Number.NaN];
    for (let digits = 1; digits <= 22; digits++) ids.push(10 ** digits - 1, 10 ** digits, -(10 ** digits));
    for (const id of ids) expect(v0Cursor(id), String(id)).toBe(firstSeal({ api: 'v0', parts: [id] }));
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -1 }), fc.maxSafeNat(), fc.double()), (id) => {
        expect(v0Cursor(id)).toBe(firstSeal({ api: 'v0', parts: [id] }));
      }),
      { numRuns: 3000, seed: 7 },
    );
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.uuid(),
    );
    fc.assert(
      fc.property(text, text, text, (id, timestamp, kind) => {
        expect(v1Cursor({ id, timestamp, kind })).toBe(
          firstSeal({ api: 'v1', parts: [id, timestamp, kind] }),
        );
      }),
      { numRuns: 3000, seed: 11 },
    );
  });

  it('seals alike through a sealer made for any API, whatever the length of its head', () => {
    // Heads of every length modulo 3 (the part encoded once), non-ASCII ones (encoded with each token)
    // and rests on both sides of the JS encoder's limit, ASCII or not.
    const apis = ['', 'v', 'v0', 'v10', 'v100', '\u00e9', '"', '\ud800'];
    const rests = [
      '',
      'a',
      'ab',
      'abc',
      'x'.repeat(14),
      'x'.repeat(15),
      'x'.repeat(16),
      '\u00e9',
      'a\u007f',
      'a\u0080',
    ];
    for (const api of apis) {
      const seal = eventCursorSealer(api);
      for (const rest of rests) {
        for (const parts of [[], [rest], [rest, 1], [-1, rest, rest]]) {
          expect(seal(parts), JSON.stringify([api, parts])).toBe(firstSeal({ api, parts }));
        }
      }
    }
  });

  it("seals tokens around its buffer's size as the first implementation did", () => {
    // A sealer writes its parts into a buffer of 512 bytes and seals from the text past it: every total
    // length across that edge, in one part or several, with heads of each length modulo 3.
    for (const api of ['v0', 'v10', 'v100']) {
      const seal = eventCursorSealer(api);
      for (let length = 470; length <= 530; length++) {
        for (const parts of [['x'.repeat(length)], ['x'.repeat(length - 40), 'y'.repeat(30), 7]]) {
          expect(seal(parts), `${api} ${length}`).toBe(firstSeal({ api, parts }));
        }
      }
    }
  });

  it('opens what it seals', () => {
    for (const id of ODD_IDS.filter((odd) => odd.length < 100 && !/[\ud800-\udfff]/.test(odd))) {
      const position = { api: 'v1', parts: [id, '2026-05-01T10:00:00.250000', 'MessageEvent'] };
      expect(openEventCursor(sealEventCursor(position))).toEqual(position);
    }
  });
});
