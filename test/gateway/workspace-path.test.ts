/**
 * The gateway's own confinement of workspace paths (src/upstream/workspace-path.ts) and the scrubbing of
 * what a workspace's text holds (src/upstream/workspace-secrets.ts): pure rules, checked here row by row;
 * the end-to-end refusals (no upstream call made) are in the workspace suites.
 */
import { describe, expect, it } from 'vitest';
import { confineWorkspacePath, isShownWorkspacePath } from '../../src/upstream/workspace-path.ts';
import { scrubWorkspaceText } from '../../src/upstream/workspace-secrets.ts';

function refusal(raw: string): unknown {
  try {
    confineWorkspacePath(raw, 'path');
    return null;
  } catch (error) {
    return (error as { extensions?: unknown }).extensions;
  }
}

describe('workspace paths', () => {
  it.each([
    ['src/app.py', 'src/app.py'],
    ['./src//app.py', 'src/app.py'],
    ['src/./nested/file.txt', 'src/nested/file.txt'],
    ['a b/it’s ünïcode.md', 'a b/it’s ünïcode.md'],
    ['.github/workflows/ci.yml', '.github/workflows/ci.yml'],
    ['repo/.gitignore', 'repo/.gitignore'],
  ])('keeps %j as %j', (raw, confined) => {
    expect(confineWorkspacePath(raw, 'path')).toBe(confined);
  });

  it.each([
    '../etc/passwd',
    'src/../../outside',
    'src/..',
    '/etc/passwd',
    '/workspace/project/src/app.py',
    'C:/Windows/win.ini',
    '~/.ssh/id_rsa',
    'src\\..\\..\\secret',
    'a\u0000b',
    'line\nbreak',
    '.git/config',
    'repo/.git/config',
    'repo/.GIT/HEAD',
    '',
    '.',
    'x'.repeat(4097),
  ])('refuses %j with WORKSPACE_PATH_REFUSED naming the argument', (raw) => {
    expect(refusal(raw)).toEqual({ code: 'WORKSPACE_PATH_REFUSED', argument: 'path' });
  });

  it('takes the root where a folder may be the whole workspace', () => {
    expect(confineWorkspacePath('', 'path', true)).toBe('');
    expect(confineWorkspacePath('./', 'path', true)).toBe('');
  });

  it('shows only paths an upstream answered inside the workspace and outside .git', () => {
    expect(isShownWorkspacePath('src/app.py')).toBe(true);
    expect(isShownWorkspacePath('repo/.git/config')).toBe(false);
    expect(isShownWorkspacePath('../x')).toBe(false);
    expect(isShownWorkspacePath('/etc/passwd')).toBe(false);
  });
});

describe('secrets in workspace text', () => {
  it.each([
    [
      'url = https://ghp_abcdefghijklmnopqrstuv@github.com/o/r.git',
      'url = https://[redacted]@github.com/o/r.git',
    ],
    ['https://x-access-token:glpat-123456789@gitlab.com/o/r', 'https://[redacted]@gitlab.com/o/r'],
    [
      'git clone https://oauth2:secret-value@host.example/r.git',
      'git clone https://[redacted]@host.example/r.git',
    ],
    ['export TOKEN=ghp_abcdefghijklmnopqrstuv', 'export TOKEN=[redacted]'],
    ['Authorization: Bearer abc.def.ghi', 'Authorization: Bearer [redacted]'],
  ])('scrubs %j', (text, scrubbed) => {
    expect(scrubWorkspaceText(text)).toBe(scrubbed);
  });

  it('leaves every other byte as it was (indentation, blank lines, e-mail addresses)', () => {
    const text = '  indented\n\n\tmail me@example.com\nhttps://github.com/o/r\n';
    expect(scrubWorkspaceText(text)).toBe(text);
  });
});
