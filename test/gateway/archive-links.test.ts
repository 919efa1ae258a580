/**
 * Archive links (src/gateway/workspace/archive-links.ts) on their own: what a link grants, and the
 * refusals of a link that was altered, cut, sealed under another key or for another purpose, or has
 * expired. The end-to-end download and a tampered link through a real gateway are in workspace.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ArchiveLinks } from '../../src/gateway/workspace/archive-links.ts';

const CALLER = { kind: 'session-api-key', key: 'caller-key-1234' } as const;

function codeOf(open: () => unknown): unknown {
  try {
    open();
    return null;
  } catch (error) {
    return (error as { extensions?: { code?: unknown; http?: unknown } }).extensions;
  }
}

describe('archive links', () => {
  it('grant their conversation and credential until they expire, and say nothing in the clear', () => {
    let now = 1_000_000;
    const links = new ArchiveLinks('k'.repeat(40), 60, () => now);
    const { token, expiresAt } = links.seal('abc123', CALLER);
    expect(expiresAt).toBe(1_000_000 + 60_000);
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('caller-key');
    expect(links.open(token)).toEqual({ conversationId: 'abc123', credentials: CALLER, expiresAt });
    now = expiresAt - 1;
    expect(links.open(token).conversationId).toBe('abc123');
    now = expiresAt;
    expect(codeOf(() => links.open(token))).toEqual({ code: 'ARCHIVE_LINK_EXPIRED', http: { status: 410 } });
  });

  it('refuse an altered, cut, foreign or malformed token as ARCHIVE_LINK_INVALID (403)', () => {
    const links = new ArchiveLinks('k'.repeat(40), 60);
    const { token } = links.seal('abc123', CALLER);
    const invalid = { code: 'ARCHIVE_LINK_INVALID', http: { status: 403 } };
    for (let at = 0; at < token.length; at += 7) {
      const flipped = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
      expect(codeOf(() => links.open(flipped))).toEqual(invalid);
    }
    expect(codeOf(() => links.open(token.slice(0, -2)))).toEqual(invalid);
    expect(codeOf(() => new ArchiveLinks('another key, just as long....', 60).open(token))).toEqual(invalid);
    for (const malformed of ['', 'x', '../etc', 'a'.repeat(5000), 'not base64!']) {
      expect(codeOf(() => links.open(malformed))).toEqual(invalid);
    }
  });
});
