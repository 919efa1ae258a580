/**
 * The conversation id rule read by character code, against the pattern it replaced: every character
 * around the allowed ranges, the length bounds, and the string representations V8 makes of upstream text.
 */
import { describe, expect, it } from 'vitest';
import { isConversationId } from '../../src/upstream/port/conversation.ts';

const PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

describe('isConversationId', () => {
  it('accepts exactly what /^[A-Za-z0-9_-]{1,128}$/ accepts', () => {
    const base = '155690d18d20488c88e95fea731748c3';
    const texts = new Set<string>(['', 'a', 'a'.repeat(128), 'a'.repeat(129), `${base}-dashed_Upper`]);
    // Each code unit up to 0x7f and a few beyond, at the start, the middle and the end.
    for (let code = 0; code < 0x80; code++) {
      const character = String.fromCharCode(code);
      texts.add(character);
      texts.add(character + base);
      texts.add(base.slice(0, 16) + character + base.slice(16));
      texts.add(base + character);
    }
    for (const character of ['é', 'Ａ', '٣', '\u2028', '\ud83d']) texts.add(base + character);
    for (const text of texts) {
      for (const variant of [
        text,
        (JSON.parse(JSON.stringify([text])) as string[])[0] as string,
        Object.keys({ [text]: true })[0] as string,
        `#${text}#`.slice(1, -1),
      ]) {
        expect([variant, isConversationId(variant)]).toEqual([variant, PATTERN.test(variant)]);
      }
    }
  });
});
