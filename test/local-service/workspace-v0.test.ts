/**
 * The V0 face's workspace (src/local-service/v0/workspace-routes.ts, workspace-git.ts): a real folder
 * and git repository per conversation, read over real HTTP, and what git itself says about it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEED_FILES } from '../../src/local-service/workspace/workspaces.ts';
import { readZip } from '../helpers/archives.ts';
import { createConversation, localServiceForTest, rest } from '../helpers/local-service.ts';
import { changeWorkspace, gitIn, workspaceRepository } from '../helpers/workspace.ts';

const KEY = 'workspace-key';
const OTHER = 'other-key';

async function conversationWithWorkspace(options: Parameters<typeof localServiceForTest>[0] = {}) {
  const service = await localServiceForTest({ sessionApiKeys: [KEY, OTHER], ...options });
  const id = await createConversation(service.url, {}, KEY);
  const folder = await workspaceRepository(service.dataDir, 'v0', id);
  const get = <T = unknown>(path: string) =>
    rest<T>(service.url, `/api/conversations/${id}/${path}`, { key: KEY });
  return { service, id, folder, get };
}

/** `git status --porcelain` read as V0's letters (renames D + A, untracked A), sorted by path. */
async function statusAsChanges(folder: string): Promise<Array<{ status: string; path: string }>> {
  const out = (await gitIn(folder, ['status', '--porcelain=v1', '-z', '--untracked-files=all'])).stdout;
  const fields = out.split('\0').filter((f) => f !== '');
  const changes: Array<{ status: string; path: string }> = [];
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i] as string;
    const code = entry.slice(0, 2);
    const path = entry.slice(3);
    if (code.startsWith('R')) {
      changes.push({ status: 'A', path }, { status: 'D', path: fields[++i] as string });
    } else {
      changes.push({ status: code === '??' ? 'A' : (code.trim()[0] as string), path });
    }
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : 1));
}

describe('V0 workspace: files', () => {
  it('a new conversation has a repository of the seed files: one commit on main, origin/main beside it', async () => {
    const { folder } = await conversationWithWorkspace();
    for (const [path, text] of Object.entries(SEED_FILES))
      expect(readFileSync(join(folder, path), 'utf8')).toBe(text);
    expect((await gitIn(folder, ['log', '--format=%s|%an', 'main'])).stdout).toBe(
      'Initial commit|openhands\n',
    );
    expect((await gitIn(folder, ['rev-parse', 'origin/main'])).stdout).toBe(
      (await gitIn(folder, ['rev-parse', 'HEAD'])).stdout,
    );
    expect((await gitIn(folder, ['status', '--porcelain'])).stdout).toBe('');
  });

  it('list-files: one level, folders first, path-prefixed; .git and .gitignore-d entries left out; missing or outside paths []', async () => {
    const { folder, get } = await conversationWithWorkspace();
    changeWorkspace(folder, {
      'debug.log': 'x',
      'build/out.txt': 'x',
      'node_modules/a.js': 'x',
      'Zeta.md': 'z',
      'alpha/b.txt': 'b',
    });
    expect(await get('list-files')).toMatchObject({
      status: 200,
      body: ['alpha/', 'src/', '.gitignore', 'README.md', 'Zeta.md'],
    });
    expect((await get('list-files?path=src')).body).toEqual(['src/app.py']);
    expect((await get('list-files?path=/workspace/src')).body).toEqual(['/workspace/src/app.py']);
    for (const path of ['nope', 'README.md', '../..', '/etc'])
      expect((await get(`list-files?path=${path}`)).body).toEqual([]);
  });

  it('select-file: the text; 415 for binary, the real 500 bodies for text that is not UTF-8 and for a missing file', async () => {
    const { folder, get } = await conversationWithWorkspace();
    changeWorkspace(folder, {
      'logo.png': Uint8Array.from([
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48,
      ]),
      'latin1.txt': Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    });
    expect(await get('select-file?file=README.md')).toMatchObject({
      status: 200,
      body: { code: SEED_FILES['README.md'] },
    });
    expect((await get('select-file?file=/workspace/src/app.py')).body).toEqual({
      code: SEED_FILES['src/app.py'],
    });
    expect(await get('select-file?file=logo.png')).toMatchObject({
      status: 415,
      body: { error: 'Unable to open binary file: /workspace/logo.png' },
    });
    expect(await get('select-file?file=latin1.txt')).toMatchObject({
      status: 500,
      body: {
        error:
          'Error opening file: **ErrorObservation**\nFile could not be decoded as utf-8: /workspace/latin1.txt.',
      },
    });
    for (const file of ['missing.txt', 'src', '../../../etc/hostname', '/etc/hostname']) {
      const answer = await get(`select-file?file=${file}`);
      expect([answer.status, answer.headers.get('content-type')]).toEqual([500, 'text/plain; charset=utf-8']);
    }
    expect(await get('select-file')).toMatchObject({
      status: 422,
      body: { detail: [{ type: 'missing', loc: ['query', 'file'], msg: 'Field required', input: null }] },
    });
  });

  it("every route finds the conversation first: an unknown one, or another tenant's, is 404 (before a 422)", async () => {
    const { service, id } = await conversationWithWorkspace();
    for (const [path, key] of [
      [`/api/conversations/${'0'.repeat(32)}/list-files`, KEY],
      [`/api/conversations/${id}/select-file`, OTHER],
      [`/api/conversations/${id}/git/changes`, OTHER],
    ] as const) {
      const conversationId = path.split('/')[3];
      expect(await rest(service.url, path, { key })).toMatchObject({
        status: 404,
        body: { detail: `Conversation ${conversationId} not found` },
      });
    }
    expect((await rest(service.url, `/api/conversations/${id}/list-files`)).status).toBe(401);
  });

  it('zip-directory: application/zip attachment workspace.zip of every file, .git included, stored entries', async () => {
    const { folder, get, service, id } = await conversationWithWorkspace();
    changeWorkspace(folder, { 'notes/é.txt': 'accent\n' });
    const answer = await fetch(`${service.url}/api/conversations/${id}/zip-directory`, {
      headers: { 'x-session-api-key': KEY },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/zip');
    expect(answer.headers.get('content-disposition')).toBe('attachment; filename="workspace.zip"');
    const entries = readZip(Buffer.from(await answer.arrayBuffer()));
    const names = entries.map((e) => e.name);
    expect(names.slice(0, 2)).toEqual(['.gitignore', 'README.md']);
    expect(names).toEqual(expect.arrayContaining(['.git/HEAD', 'notes/é.txt', 'src/app.py']));
    expect(entries.every((e) => e.method === 0)).toBe(true);
    expect(entries.find((e) => e.name === 'src/app.py')?.data.toString()).toBe(SEED_FILES['src/app.py']);
    expect((await get('list-files')).status).toBe(200);
  });

  it('upload-files: each file to /workspace/<name>, decoded as UTF-8 with replacement and written line by line', async () => {
    const { folder, service, id } = await conversationWithWorkspace();
    const form = new FormData();
    form.append('files', new Blob(['hello']), 'hello.txt');
    form.append('files', new Blob([Uint8Array.from([0x68, 0xff, 0x69])]), 'docs/raw.bin');
    form.append('files', new Blob(['escape']), '../escape.txt');
    const url = `${service.url}/api/conversations/${id}/upload-files`;
    const answer = await fetch(url, { method: 'POST', body: form, headers: { 'x-session-api-key': KEY } });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      uploaded_files: ['/workspace/hello.txt', '/workspace/docs/raw.bin'],
      skipped_files: [{ name: '../escape.txt', reason: 'The path is outside the workspace' }],
    });
    expect(readFileSync(join(folder, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect([...readFileSync(join(folder, 'docs/raw.bin'))]).toEqual([0x68, 0xef, 0xbf, 0xbd, 0x69, 0x0a]);
    const empty = await fetch(url, {
      method: 'POST',
      body: new FormData(),
      headers: { 'x-session-api-key': KEY },
    });
    expect([empty.status, await empty.json()]).toEqual([
      422,
      { detail: [{ type: 'missing', loc: ['body', 'files'], msg: 'Field required', input: null }] },
    ]);
  });

  it("vscode-url and web-hosts: a token per conversation on the service's own port; no app hosts", async () => {
    const { service, get } = await conversationWithWorkspace();
    const first = await get<{ vscode_url: string }>('vscode-url');
    const url = new URL(first.body.vscode_url);
    expect([url.hostname, url.port, url.pathname]).toEqual(['localhost', String(service.port), '/']);
    expect(url.searchParams.get('folder')).toBe('/workspace');
    expect(url.searchParams.get('tkn')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await get('vscode-url')).body).toEqual(first.body);
    const other = await createConversation(service.url, {}, KEY);
    const second = await rest<{ vscode_url: string }>(service.url, `/api/conversations/${other}/vscode-url`, {
      key: KEY,
    });
    expect(second.body.vscode_url).not.toBe(first.body.vscode_url);
    expect(await get('web-hosts')).toMatchObject({ status: 200, body: { hosts: {} } });
  });
});

describe('V0 workspace: git', () => {
  it('git/changes agrees with git status (M, A, D; a staged rename is D + A; ignored files left out)', async () => {
    const { folder, get } = await conversationWithWorkspace();
    expect((await get('git/changes')).body).toEqual([]);
    changeWorkspace(folder, {
      'README.md': '# Changed\n',
      'notes.txt': 'new\n',
      'run.log': 'ignored',
      'build/a.o': 'x',
    });
    await gitIn(folder, ['mv', 'src/app.py', 'src/main.py']);
    const changes = await get<Array<{ status: string; path: string }>>('git/changes');
    expect(changes.status).toBe(200);
    expect(changes.body).toEqual([
      { status: 'M', path: 'README.md' },
      { status: 'A', path: 'notes.txt' },
      { status: 'D', path: 'src/app.py' },
      { status: 'A', path: 'src/main.py' },
    ]);
    expect(changes.body).toEqual(await statusAsChanges(folder));
  });

  it('git/changes reads a repository one level down too, its paths behind its folder name', async () => {
    const { folder, get } = await conversationWithWorkspace();
    changeWorkspace(folder, { 'lib/util.py': 'x = 1\n' });
    await gitIn(join(folder, 'lib'), ['init', '-q']);
    expect((await get('git/changes')).body).toEqual([{ status: 'A', path: 'lib/util.py' }]);
  });

  it('git/diff: the text at origin/main and now (lines re-joined, final break dropped); missing, large or non-UTF-8 files the real 500', async () => {
    const { folder, get } = await conversationWithWorkspace();
    changeWorkspace(folder, {
      'README.md': '# Changed\r\nline two\n\n',
      'new.txt': 'fresh\n',
      'big.txt': 'x'.repeat(1024 * 1024 + 1),
      'latin1.txt': Uint8Array.from([0x63, 0x61, 0x66, 0xe9]),
    });
    const original = (await gitIn(folder, ['show', 'origin/main:README.md'])).stdout.trim();
    expect(await get('git/diff?path=README.md')).toMatchObject({
      status: 200,
      body: { modified: '# Changed\nline two\n', original },
    });
    expect((await gitIn(folder, ['diff', '--quiet', 'origin/main', '--', 'README.md'])).code).toBe(1);
    expect((await get('git/diff?path=/workspace/new.txt')).body).toEqual({ modified: 'fresh', original: '' });
    changeWorkspace(folder, { 'src/app.py': null });
    for (const path of ['src/app.py', 'big.txt', 'latin1.txt', 'src', '../../x']) {
      const answer = await get(`git/diff?path=${path}`);
      expect([answer.status, answer.headers.get('content-type')]).toEqual([500, 'text/plain; charset=utf-8']);
    }
    expect((await get('git/diff')).status).toBe(422);
  });
});
