/**
 * The pure parts both workspace adapters share (src/upstream/workspace-text.ts, workspace-lists.ts,
 * multipart.ts) and V0's reading of a JSON string cut short (src/upstream/v0/select-file.ts): cutting
 * text on whole characters, telling binary from text, scrubbing diffs, change lists through each API's
 * statuses, entries in order, multipart bodies byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { multipartBody } from '../../src/upstream/multipart.ts';
import { codePrefix } from '../../src/upstream/v0/select-file.ts';
import {
  readChangeList,
  sortChanges,
  sortEntries,
  workspaceEntry,
} from '../../src/upstream/workspace-lists.ts';
import { capText, decodeFileBytes, fileDiff, textFileContent } from '../../src/upstream/workspace-text.ts';
import { multipartParts } from '../helpers/workspace-double.ts';

describe('text', () => {
  it('capText cuts on whole characters, by UTF-8 bytes', () => {
    expect(capText('abc', 3)).toEqual({ text: 'abc', truncated: false });
    expect(capText('abcd', 3)).toEqual({ text: 'abc', truncated: true });
    // é is 2 bytes, 😀 is 4 (a surrogate pair): never half of either.
    expect(capText('aé', 2)).toEqual({ text: 'a', truncated: true });
    expect(capText('😀😀', 7)).toEqual({ text: '😀', truncated: true });
    expect(capText('😀', 4)).toEqual({ text: '😀', truncated: false });
    expect(capText('x', 0)).toEqual({ text: '', truncated: true });
  });

  it('decodeFileBytes: not UTF-8 or a NUL is binary; a character cut at the end of a prefix is left out', () => {
    expect(decodeFileBytes(Buffer.from('café'), true)).toBe('café');
    expect(decodeFileBytes(Buffer.from('caf\xe9', 'latin1'), true)).toBeNull();
    expect(decodeFileBytes(Buffer.from('a\u0000b'), true)).toBeNull();
    const cut = Buffer.from('ab😀').subarray(0, 4); // 'a', 'b' and the first 2 of 4 bytes
    expect(decodeFileBytes(cut, false)).toBe('ab');
    expect(decodeFileBytes(cut, true)).toBeNull();
    expect(decodeFileBytes(Buffer.from('aé').subarray(0, 2), false)).toBe('a');
  });

  it('textFileContent scrubs before it cuts, so a secret across the cap is never half shown', () => {
    const token = 'ghp_0123456789abcdefABCDEF0123456789abcd';
    const content = textFileContent('a.txt', `xx ${token}`, { maxBytes: 10, size: 42, longer: false });
    expect(content).toEqual({ path: 'a.txt', size: 42, binary: false, text: 'xx [redact', truncated: true });
    expect(textFileContent('b', 'short', { maxBytes: 10, size: null, longer: true }).truncated).toBe(true);
  });

  it('fileDiff: scrubbed sides; no texts when binary or too large', () => {
    expect(fileDiff('a', 'https://user:pw@host/x', 'plain')).toEqual({
      path: 'a',
      original: 'https://[redacted]@host/x',
      modified: 'plain',
      binary: false,
      tooLarge: false,
    });
    expect(fileDiff('a', 'x\u0000y', 'z')).toEqual({
      path: 'a',
      original: null,
      modified: null,
      binary: true,
      tooLarge: false,
    });
    expect(fileDiff('a', null, null, { tooLarge: true })).toMatchObject({ tooLarge: true, original: null });
    expect(fileDiff('a', null, null)).toMatchObject({ original: null, modified: null, binary: false });
  });
});

describe('lists', () => {
  const table = { M: 'MODIFIED', A: 'ADDED' } as const;

  it('readChangeList: statuses through the table (UNKNOWN + raw), paths under the folder, unshowable ones out', () => {
    expect(
      readChangeList(
        [
          { status: 'M', path: 'a.py' },
          { status: 'Q', path: './b.py' },
          { status: 7, path: 'c.py' },
          { status: 'A', path: '.git/HEAD' },
          { status: 'A', path: '../../etc/passwd' },
          { status: 'A', path: '/abs' },
          { status: 'A' },
          null,
        ],
        table,
        'repo',
      ),
    ).toEqual([
      { path: 'repo/a.py', status: 'MODIFIED', statusRaw: 'M' },
      { path: 'repo/b.py', status: 'UNKNOWN', statusRaw: 'Q' },
      { path: 'repo/c.py', status: 'UNKNOWN', statusRaw: '7' },
    ]);
    expect(readChangeList({ error: 'boom' }, table, '')).toBeNull();
  });

  it('sortChanges orders by path and keeps each path once', () => {
    const change = (path: string) => ({ path, status: 'ADDED' as const, statusRaw: 'A' });
    expect(sortChanges([change('b'), change('a'), change('b'), change('B')]).map((c) => c.path)).toEqual([
      'B',
      'a',
      'b',
    ]);
  });

  it('entries: folders first, then by name case-insensitively; odd names left out', () => {
    const entries = [
      workspaceEntry('src', 'b.py', 'FILE'),
      workspaceEntry('src', 'A.py', 'FILE'),
      workspaceEntry('src', 'lib', 'DIRECTORY'),
      workspaceEntry('src', '.git', 'DIRECTORY'),
      workspaceEntry('src', 'a/b', 'FILE'),
      workspaceEntry('src', '..', 'DIRECTORY'),
    ];
    expect(entries.slice(3)).toEqual([null, null, null]);
    expect(sortEntries(entries.filter((e) => e !== null)).map((e) => e.path)).toEqual([
      'src/lib',
      'src/A.py',
      'src/b.py',
    ]);
  });
});

describe("V0's select-file answer read so far", () => {
  it('whole when its closing quote was read; else up to the last whole escape', () => {
    expect(codePrefix('{"code":"a\\"b"}')).toEqual({ text: 'a"b', complete: true });
    expect(codePrefix('{ "code" : "line\\nnext')).toEqual({ text: 'line\nnext', complete: false });
    expect(codePrefix('{"code":"ab\\')).toEqual({ text: 'ab', complete: false });
    expect(codePrefix('{"code":"ab\\u00')).toEqual({ text: 'ab', complete: false });
    expect(codePrefix('{"code":"é\\u00e9')).toEqual({ text: 'éé', complete: false });
    // A pair cut after its first half: the half is left out.
    expect(codePrefix('{"code":"x\\ud83d')).toEqual({ text: 'x', complete: false });
    expect(codePrefix('{"code":"x\\ud83d\\ude00')).toEqual({ text: 'x😀', complete: false });
    expect(codePrefix('{"error":"x"}')).toBeNull();
  });
});

describe('multipart', () => {
  it('carries the bytes unchanged and the names quoted as browsers do', () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0x0d, 0x0a, 0x2d, 0x2d]);
    const body = multipartBody([
      { field: 'files', fileName: 'dir/a "b".bin', bytes },
      { field: 'files', fileName: 'empty', bytes: Buffer.alloc(0) },
    ]);
    expect(body.contentType).toMatch(/^multipart\/form-data; boundary=-+conversation-gateway-[0-9a-f]{36}$/);
    const parts = multipartParts({
      method: 'POST',
      path: '/',
      query: new URLSearchParams(),
      headers: { 'content-type': body.contentType },
      body: Buffer.from(body.bytes),
      json: undefined,
    });
    expect(parts).toEqual([
      { name: 'files', fileName: 'dir/a %22b%22.bin', bytes },
      { name: 'files', fileName: 'empty', bytes: Buffer.alloc(0) },
    ]);
  });
});
