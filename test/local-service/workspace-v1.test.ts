/**
 * The V1 agent server's workspace routes (src/local-service/v1/file-routes.ts, git-routes.ts) over a
 * sandbox's real folder and repository, read over real HTTP with the sandbox's key, and what git
 * itself says about it.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEED_FILES } from '../../src/local-service/workspace/workspaces.ts';
import { readTarGz, tarList } from '../helpers/archives.ts';
import { localServiceForTest, type RestOptions, rest, tempDataDirForTest } from '../helpers/local-service.ts';
import { changeWorkspace, gitIn, workspaceRepository } from '../helpers/workspace.ts';
import { startConversation } from './v1-harness.ts';

const P = '/workspace/project';

async function sandboxWithWorkspace() {
  const service = await localServiceForTest({ api: 'v1' });
  const { conversation } = await startConversation(service.url);
  const folder = await workspaceRepository(service.dataDir, 'v1', conversation.sandbox_id);
  const origin = new URL(conversation.conversation_url as string).origin;
  /** A call to the sandbox's agent server with its key. */
  const agent = <T = unknown>(path: string, options: RestOptions = {}) =>
    rest<T>(origin, path, { key: conversation.session_api_key ?? '', ...options });
  return { service, conversation, folder, origin, agent };
}

/** `git status --porcelain` read as the agent server's statuses (untracked ADDED), sorted by path. */
async function statusAsChanges(folder: string) {
  const out = (await gitIn(folder, ['status', '--porcelain=v1', '-z', '--untracked-files=all'])).stdout;
  const names: Record<string, string> = { '??': 'ADDED', A: 'ADDED', M: 'UPDATED', D: 'DELETED' };
  return out
    .split('\0')
    .filter((entry) => entry !== '')
    .map((entry) => ({
      status: names[entry.slice(0, 2)] ?? names[entry.slice(0, 2).trim()] ?? '?',
      path: entry.slice(3),
    }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
}

describe('V1 agent server: files', () => {
  it('download: the bytes as an attachment; 400 for a relative path or a folder, 404 for a missing file or one outside the project', async () => {
    const { folder, agent, origin, conversation } = await sandboxWithWorkspace();
    changeWorkspace(folder, { 'my notes.txt': Uint8Array.from([0, 1, 2, 255]) });
    const readme = await fetch(`${origin}/api/file/download?path=${P}/README.md`, {
      headers: { 'x-session-api-key': conversation.session_api_key ?? '' },
    });
    expect(readme.status).toBe(200);
    expect(readme.headers.get('content-type')).toBe('application/octet-stream');
    expect(readme.headers.get('content-disposition')).toBe('attachment; filename="README.md"');
    expect(await readme.text()).toBe(SEED_FILES['README.md']);
    const spaced = await fetch(
      `${origin}/api/file/download?path=${encodeURIComponent(`${P}/my notes.txt`)}`,
      {
        headers: { 'x-session-api-key': conversation.session_api_key ?? '' },
      },
    );
    expect(spaced.headers.get('content-disposition')).toBe("attachment; filename*=utf-8''my%20notes.txt");
    expect([...new Uint8Array(await spaced.arrayBuffer())]).toEqual([0, 1, 2, 255]);
    expect(await agent('/api/file/download?path=README.md')).toMatchObject({
      status: 400,
      body: { detail: 'Path must be absolute' },
    });
    expect(await agent(`/api/file/download?path=${P}/src`)).toMatchObject({
      status: 400,
      body: { detail: 'Path is not a file' },
    });
    for (const path of [`${P}/nope`, '/etc/hostname', `${P}/../../etc/hostname`]) {
      expect(await agent(`/api/file/download?path=${path}`)).toMatchObject({
        status: 404,
        body: { detail: 'File not found' },
      });
    }
    expect((await agent('/api/file/download')).status).toBe(422);
    expect((await rest(origin, `/api/file/download?path=${P}/README.md`)).status).toBe(401);
  });

  it('upload: one file, byte for byte, parents made; outside the project the 500 of a place it may not write', async () => {
    const { folder, origin, conversation } = await sandboxWithWorkspace();
    const upload = async (path: string, parts: Array<[string, Blob | string, string?]>) => {
      const form = new FormData();
      for (const [name, value, fileName] of parts) {
        if (typeof value === 'string') form.append(name, value);
        else form.append(name, value, fileName);
      }
      const answer = await fetch(`${origin}/api/file/upload?path=${encodeURIComponent(path)}`, {
        method: 'POST',
        body: form,
        headers: { 'x-session-api-key': conversation.session_api_key ?? '' },
      });
      return { status: answer.status, body: await answer.json() };
    };
    const bytes = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff, 0x0a]);
    expect(await upload(`${P}/assets/img/logo.png`, [['file', new Blob([bytes]), 'x.png']])).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect([...readFileSync(join(folder, 'assets/img/logo.png'))]).toEqual([...bytes]);
    expect(await upload('relative.txt', [['file', new Blob(['x']), 'x']])).toMatchObject({
      status: 400,
      body: { detail: 'Path must be absolute' },
    });
    expect(await upload('/etc/owned', [['file', new Blob(['x']), 'x']])).toMatchObject({
      status: 500,
      body: {
        detail: 'Internal Server Error',
        exception: "500: Failed to upload file: [Errno 13] Permission denied: '/etc/owned'",
      },
    });
    expect(await upload(`${P}/src`, [['file', new Blob(['x']), 'x']])).toMatchObject({
      status: 500,
      body: { exception: `500: Failed to upload file: [Errno 21] Is a directory: '${P}/src'` },
    });
    expect(await upload(`${P}/a.txt`, [['other', 'x']])).toMatchObject({
      status: 422,
      body: { detail: [{ type: 'missing', loc: ['body', 'file'], msg: 'Field required', input: null }] },
    });
  });

  it('search_subdirs: folders only (no links, no dot-folders unless asked), sorted case-insensitively, paged by name', async () => {
    const { folder, agent } = await sandboxWithWorkspace();
    for (const name of ['beta', 'Alpha', '.hidden']) mkdirSync(join(folder, name));
    symlinkSync(join(folder, 'src'), join(folder, 'linked'));
    writeFileSync(join(folder, 'afile'), 'x');
    const list = (query: string) => agent(`/api/file/search_subdirs?path=${P}${query}`);
    const item = (name: string) => ({ name, path: `${P}/${name}` });
    expect(await list('')).toMatchObject({
      status: 200,
      body: { items: [item('Alpha'), item('beta'), item('src')], next_page_id: null },
    });
    expect((await list('&include_hidden=true')).body).toMatchObject({
      items: [item('.git'), item('.hidden'), item('Alpha'), item('beta'), item('src')],
    });
    expect((await list('&limit=1')).body).toEqual({ items: [item('Alpha')], next_page_id: 'beta' });
    expect((await list('&limit=1&page_id=beta')).body).toEqual({
      items: [item('beta')],
      next_page_id: 'src',
    });
    expect((await list('&limit=101')).status).toBe(500);
    expect((await list('&limit=0')).status).toBe(422);
    expect(await agent(`/api/file/search_subdirs?path=${P}/afile`)).toMatchObject({
      status: 400,
      body: { detail: 'Path is not a directory' },
    });
    expect(await agent('/api/file/search_subdirs?path=/etc')).toMatchObject({
      status: 404,
      body: { detail: 'Directory not found' },
    });
  });

  it('archive: tar.gz of the project (default excludes, never .git, a manifest last); git-delta the working-tree patch', async () => {
    const { folder, agent, origin, conversation } = await sandboxWithWorkspace();
    changeWorkspace(folder, {
      'README.md': '# Changed\n',
      'node_modules/x/i.js': 'x',
      'cache.pyc': 'x',
      'notes.txt': 'new\n',
    });
    const key = conversation.session_api_key ?? '';
    const archive = await fetch(`${origin}/api/file/archive?path=${P}&format=tar.gz`, {
      headers: { 'x-session-api-key': key },
    });
    expect(archive.status).toBe(200);
    expect(archive.headers.get('content-type')).toBe('application/gzip');
    expect(archive.headers.get('content-disposition')).toBe('attachment; filename="project.tar.gz"');
    expect(archive.headers.get('x-archive-branch')).toBe('main');
    expect(archive.headers.get('x-archive-repo-root')).toBe('%2Fworkspace%2Fproject');
    expect(archive.headers.get('x-archive-head-commit')).toBe(
      (await gitIn(folder, ['rev-parse', 'HEAD'])).stdout.trim(),
    );
    const bytes = Buffer.from(await archive.arrayBuffer());
    const members = readTarGz(bytes);
    expect(members.map((m) => m.name)).toEqual([
      'project/',
      'project/.gitignore',
      'project/README.md',
      'project/notes.txt',
      'project/src/',
      'project/src/app.py',
      'project/archive_manifest.json',
    ]);
    expect(JSON.parse(members.at(-1)?.data.toString() ?? '')).toMatchObject({
      file_count: 4,
      format: 'tar.gz',
      source: 'project',
    });
    const saved = join(tempDataDirForTest('archive-'), 'project.tar.gz');
    writeFileSync(saved, bytes);
    expect(await tarList(saved)).toEqual(members.map((m) => m.name));
    const full = readTarGz(
      Buffer.from(
        await (
          await fetch(`${origin}/api/file/archive?path=${P}&format=tar.gz&use_default_excludes=false`, {
            headers: { 'x-session-api-key': key },
          })
        ).arrayBuffer(),
      ),
    );
    expect(full.map((m) => m.name)).toContain('project/node_modules/x/i.js');
    expect(full.some((m) => m.name.includes('.git/'))).toBe(false);

    const delta = await fetch(`${origin}/api/file/archive?path=${P}`, {
      headers: { 'x-session-api-key': key },
    });
    expect(delta.headers.get('content-type')).toBe('text/x-patch');
    expect(delta.headers.get('content-disposition')).toBe('attachment; filename="project.patch"');
    expect(delta.headers.get('x-archive-base-ref')).toBe('auto');
    const patch = await delta.text();
    expect(patch).toContain('diff --git a/README.md b/README.md');
    expect(patch).toContain('+# Changed');
    expect(patch).toContain('diff --git a/notes.txt b/notes.txt');
    expect(patch).not.toContain('node_modules');
    expect((await gitIn(folder, ['status', '--porcelain', '--untracked-files=no'])).stdout).toBe(
      ' M README.md\n',
    );
    expect(await agent(`/api/file/archive?path=${P}&base_ref=nope`)).toMatchObject({
      status: 400,
      body: { detail: "base_ref 'nope' could not be resolved" },
    });
    expect((await agent(`/api/file/archive?path=${P}&format=zip`)).body).toMatchObject({
      detail: [{ type: 'literal_error' }],
    });
    expect(await agent('/api/file/archive?path=/etc')).toMatchObject({
      status: 404,
      body: { detail: 'Directory not found' },
    });
  });

  it("vscode: the URL with the sandbox key (default base and folder as the agent server has them); the sandbox's exposed VSCODE URL names the project", async () => {
    const { service, conversation, agent } = await sandboxWithWorkspace();
    const key = conversation.session_api_key;
    expect((await agent('/api/vscode/url')).body).toEqual({
      url: `http://localhost:8001/?tkn=${key}&folder=workspace`,
    });
    expect((await agent(`/api/vscode/url?base_url=http://host:9/&workspace_dir=${P}`)).body).toEqual({
      url: `http://host:9/?tkn=${key}&folder=${P}`,
    });
    expect((await agent('/api/vscode/status')).body).toEqual({ running: false, enabled: true });
    const sandbox = await rest<Array<{ exposed_urls: Array<{ name: string; url: string }> }>>(
      service.url,
      `/api/v1/sandboxes?id=${conversation.sandbox_id}`,
    );
    const vscode = sandbox.body[0]?.exposed_urls.find((u) => u.name === 'VSCODE');
    expect(vscode?.url).toBe(
      `${new URL(conversation.conversation_url as string).origin}/?tkn=${key}&folder=${P}`,
    );
  });
});

describe('V1 agent server: git', () => {
  it('changes agree with git status (UPDATED, ADDED, DELETED); ref=HEAD alike; a bad ref is 400; outside the project []', async () => {
    const { folder, agent, service, conversation } = await sandboxWithWorkspace();
    changeWorkspace(folder, {
      'README.md': '# Changed\n',
      'notes.txt': 'new\n',
      'src/app.py': null,
      'x.log': 'ignored',
    });
    const changes = await agent(`/api/git/changes?path=${P}`);
    expect(changes).toMatchObject({
      status: 200,
      body: [
        { status: 'UPDATED', path: 'README.md' },
        { status: 'ADDED', path: 'notes.txt' },
        { status: 'DELETED', path: 'src/app.py' },
      ],
    });
    expect(changes.body).toEqual(await statusAsChanges(folder));
    expect((await agent(`/api/git/changes?path=${P}&ref=HEAD`)).body).toEqual(changes.body);
    expect(await agent(`/api/git/changes?path=${P}&ref=nope`)).toMatchObject({
      status: 400,
      body: { detail: "Git command failed: git --no-pager rev-parse --verify 'nope^{commit}'" },
    });
    for (const path of ['/workspace', '/tmp'])
      expect((await agent(`/api/git/changes?path=${path}`)).body).toEqual([]);
    const proxied = await rest(
      service.url,
      `/api/v1/app-conversations/${conversation.id}/git/changes?path=${P}`,
    );
    expect(proxied).toMatchObject({ status: 200, body: changes.body });
  });

  it('diff: the texts at the base and now; a deleted or large file 400; not UTF-8 modified ""; commit= reads both sides from git', async () => {
    const { folder, agent } = await sandboxWithWorkspace();
    changeWorkspace(folder, {
      'README.md': '# Changed\n\nmore\n',
      'latin1.txt': Uint8Array.from([0xe9]),
      'big.txt': 'x'.repeat(1024 * 1024 + 1),
    });
    const original = (await gitIn(folder, ['show', 'HEAD:README.md'])).stdout.trim();
    expect(await agent(`/api/git/diff?path=${P}/README.md`)).toMatchObject({
      status: 200,
      body: { modified: '# Changed\n\nmore', original },
    });
    expect((await agent('/api/git/diff?path=README.md')).body).toEqual({
      modified: '# Changed\n\nmore',
      original,
    });
    expect((await agent(`/api/git/diff?path=${P}/latin1.txt`)).body).toEqual({ modified: '', original: '' });
    changeWorkspace(folder, { 'src/app.py': null });
    expect(await agent(`/api/git/diff?path=${P}/src/app.py`)).toMatchObject({
      status: 400,
      body: { detail: `File does not exist: ${P}/src/app.py` },
    });
    expect(await agent(`/api/git/diff?path=${P}/big.txt`)).toMatchObject({
      status: 400,
      body: { detail: 'File too large for git diff: 1048577 bytes (max: 1048576 bytes)' },
    });
    expect(await agent(`/api/git/diff?path=${P}/README.md&ref=HEAD&commit=abcd`)).toMatchObject({
      status: 400,
      body: { detail: "'ref' and 'commit' are mutually exclusive" },
    });
    expect((await agent(`/api/git/diff?path=${P}/README.md&commit=zz`)).body).toMatchObject({
      detail: [{ type: 'string_pattern_mismatch', loc: ['query', 'commit'] }],
    });
    const head = (await gitIn(folder, ['rev-parse', 'HEAD'])).stdout.trim();
    expect((await agent(`/api/git/diff?path=${P}/src/app.py&commit=${head}`)).body).toEqual({
      modified: SEED_FILES['src/app.py']?.trim(),
      original: '',
    });
  });

  it("commits newest first with has_more; a commit's changes against its parent (the root against the empty tree)", async () => {
    const { folder, agent } = await sandboxWithWorkspace();
    changeWorkspace(folder, { 'README.md': '# Second\n', 'extra.txt': 'e\n' });
    await gitIn(folder, ['add', '-A']);
    await gitIn(folder, ['commit', '-q', '-m', 'Second commit']);
    const shas = (await gitIn(folder, ['log', '--format=%H'])).stdout.trim().split('\n');
    const page = await agent<{ commits: Array<Record<string, string>>; has_more: boolean }>(
      `/api/git/commits?path=${P}`,
    );
    expect(page.body.commits.map((c) => [c.sha, c.subject, c.author])).toEqual([
      [shas[0], 'Second commit', 'openhands'],
      [shas[1], 'Initial commit', 'openhands'],
    ]);
    expect(page.body.commits[0]?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect((await agent<{ has_more: boolean }>(`/api/git/commits?path=${P}&limit=1`)).body.has_more).toBe(
      true,
    );
    expect((await agent(`/api/git/commits?path=${P}&limit=201`)).body).toMatchObject({
      detail: [{ type: 'less_than_equal' }],
    });
    expect((await agent(`/api/git/commits/${shas[0]}/changes?path=${P}`)).body).toEqual([
      { status: 'UPDATED', path: 'README.md' },
      { status: 'ADDED', path: 'extra.txt' },
    ]);
    expect((await agent(`/api/git/commits/${shas[1]?.slice(0, 8)}/changes?path=${P}`)).body).toEqual(
      Object.keys(SEED_FILES).map((path) => ({ status: 'ADDED', path })),
    );
    expect((await agent(`/api/git/commits/abcd/changes?path=${P}`)).status).toBe(400);
    expect((await agent(`/api/git/commits/zz/changes?path=${P}`)).body).toMatchObject({
      detail: [{ loc: ['path', 'sha'] }],
    });
    expect((await agent('/api/git/commits?path=/tmp')).body).toEqual({ commits: [], has_more: false });
  });
});
