/**
 * The pure parts of the workspaces, each against the behaviour it imitates: the script's file verbs,
 * binaryornot's rule, pathspec's gitwildmatch, Python's splitlines, difflib's zero-context diff, the
 * file editor's str_replace refusals, the archive's excludes, and confinement of sandbox paths.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentScript, CREATED_FILE_TEXT } from '../../src/local-service/agent-script.ts';
import { gitignoreFilter, looksBinary } from '../../src/local-service/v0/file-kinds.ts';
import { isExcluded } from '../../src/local-service/v1/workspace-archive.ts';
import { editorStrReplace, unifiedDiff } from '../../src/local-service/workspace/file-editor.ts';
import { confinedHostPath, pythonJoin } from '../../src/local-service/workspace/sandbox-paths.ts';
import { rejoinLines } from '../../src/local-service/workspace/text.ts';
import { tempDataDirForTest } from '../helpers/local-service.ts';

describe("the script's file verbs", () => {
  it('write, edit (with and without ---, alone) and delete; the path on the first line, the rest verbatim', () => {
    expect(agentScript('write: a/b.txt\nline 1\n\nline 3\n').steps).toEqual([
      { kind: 'write', path: 'a/b.txt', content: 'line 1\n\nline 3\n' },
    ]);
    expect(agentScript('Edit:  x.py \n  old\n---\n  new').steps).toEqual([
      { kind: 'replace', path: 'x.py', oldText: '  old', newText: '  new' },
    ]);
    expect(agentScript('edit: x.py\ndrop me').steps).toEqual([
      { kind: 'replace', path: 'x.py', oldText: 'drop me', newText: '' },
    ]);
    expect(agentScript('edit: new.md').steps).toEqual([
      { kind: 'create', path: 'new.md', fileText: CREATED_FILE_TEXT },
    ]);
    expect(agentScript('delete: /workspace/x').steps).toEqual([{ kind: 'delete', path: '/workspace/x' }]);
    expect(agentScript('write:').steps).toEqual([{ kind: 'message', content: 'You said: write:' }]);
  });
});

describe('binaryornot and gitwildmatch, as V0 uses them', () => {
  it('binary: NULs or control bytes in what is not UTF-8; text: ASCII, UTF-8, Latin-1 without NUL or 0xFF', () => {
    const bytes = (...values: number[]) => Uint8Array.from(values);
    expect(looksBinary('a.png', bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d))).toBe(
      true,
    );
    expect(looksBinary('a.bin', bytes(...Array.from({ length: 64 }, (_, i) => i % 32)))).toBe(true);
    expect(looksBinary('x.pyc', bytes(0x61))).toBe(true);
    expect(looksBinary('a.txt', Buffer.from('plain text\n'))).toBe(false);
    expect(looksBinary('a.txt', Buffer.from('héllo wörld ünïcode ✓'))).toBe(false);
    expect(looksBinary('a.txt', bytes(0x63, 0x61, 0x66, 0xe9, 0x0a))).toBe(false);
    expect(looksBinary('a.txt', bytes(0x63, 0x61, 0x66, 0xff))).toBe(true);
    expect(looksBinary('empty', bytes())).toBe(false);
  });

  it('gitignore: unanchored names at any depth, folders by their slash, anchored paths, negation, comments', () => {
    const ignored = gitignoreFilter('# comment\n*.log\nbuild/\n/top.txt\ndocs/*.tmp\n!keep.log\n');
    expect(
      ['a.log', 'src/b.log', 'build/', 'src/build/x', 'top.txt', 'docs/x.tmp'].filter(ignored),
    ).toHaveLength(6);
    expect(['keep.log', 'build', 'src/top.txt', 'docs/a/x.tmp', 'README.md'].filter(ignored)).toEqual([]);
  });
});

describe('text and diffs', () => {
  it("Python's '\\n'.join(text.splitlines()): every line break, one dropped at the end", () => {
    expect(rejoinLines('a\r\nb\rc\n\nd\u2028e\n')).toBe('a\nb\nc\n\nd\ne');
    expect(rejoinLines('')).toBe('');
    expect(rejoinLines('\n')).toBe('');
    expect(rejoinLines('x')).toBe('x');
  });

  it("difflib's unified diff with no context: one hunk, its ranges as difflib writes them", () => {
    expect(unifiedDiff('a\nb\nc', 'a\nB\nc', '/f')).toBe('--- /f\n+++ /f\n@@ -2 +2 @@\n-b\n+B');
    expect(unifiedDiff('a\nc', 'a\nb1\nb2\nc', '/f')).toBe('--- /f\n+++ /f\n@@ -1,0 +2,2 @@\n+b1\n+b2');
    expect(unifiedDiff('', 'x\n', '/f')).toBe('--- /f\n+++ /f\n@@ -0,0 +1 @@\n+x');
    expect(unifiedDiff('same', 'same', '/f')).toBe('');
  });

  it('str_replace refuses none, several and equal texts, as the file editor words it', () => {
    const dir = tempDataDirForTest('editor-');
    const file = join(dir, 'f.txt');
    writeFileSync(file, 'x = 1\ny = 1\nx = 1\n');
    expect(editorStrReplace(file, '/w/f.txt', 'x = 1', 'x = 2')).toEqual({
      ok: false,
      error:
        'No replacement was performed. Multiple occurrences of old_str `x = 1` in lines [1, 3]. Please ensure it is unique.',
    });
    expect(editorStrReplace(file, '/w/f.txt', 'z', 'z')).toMatchObject({
      ok: false,
      error: expect.stringContaining('must be different'),
    });
    expect(editorStrReplace(file, '/w/f.txt', '  y = 1  ', 'y = 3')).toMatchObject({
      ok: true,
      newContent: 'x = 1\ny = 3\nx = 1\n',
    });
    expect(editorStrReplace(null, '/etc/x', 'a', 'b')).toMatchObject({ ok: false });
  });
});

describe('paths and excludes', () => {
  it('a sandbox path maps into the workspace only; .. and links out of it map to nothing', () => {
    const root = join(tempDataDirForTest('paths-'), 'ws');
    mkdirSync(join(root, 'src'), { recursive: true });
    symlinkSync('/etc', join(root, 'out'));
    expect(pythonJoin('/workspace', 'a/b')).toBe('/workspace/a/b');
    expect(pythonJoin('/workspace', '/etc/x')).toBe('/etc/x');
    expect(confinedHostPath(root, '/workspace', '/workspace/src/new.txt')).toBe(join(root, 'src', 'new.txt'));
    expect(confinedHostPath(root, '/workspace', '/workspace')).toBe(root);
    for (const path of ['/workspace/../etc', '/workspacex/a', '/workspace/out/hostname', '/etc']) {
      expect(confinedHostPath(root, '/workspace', path)).toBeNull();
    }
  });

  it("the archive's excludes: bare names at any depth, folder-only patterns spare a file of that name", () => {
    const patterns = ['node_modules/', '*.pyc', 'secrets/prod', 'build/'];
    expect(isExcluded(['a', 'node_modules'], patterns, true)).toBe(true);
    expect(isExcluded(['x.pyc'], patterns, false)).toBe(true);
    expect(isExcluded(['secrets', 'prod', 'key'], patterns, false)).toBe(true);
    expect(isExcluded(['build'], patterns, false)).toBe(false);
    expect(isExcluded(['src', 'app.py'], patterns, false)).toBe(false);
  });
});
