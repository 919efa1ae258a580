/**
 * The V0 adapter's workspace calls (src/upstream/v0/workspace-*.ts) against a scripted OpenHands 0.53
 * over real sockets (test/helpers/workspace-double.ts), called on the adapter directly: what the
 * bundled service never answers but a real server, a proxy or a broken runtime does. A stopped
 * conversation is never asked for its workspace (0.53 would restart it); HTML where JSON was expected
 * and a 500 are coded; a huge file is read only to the cap; 0.53's ambiguous 500s (a file that is not
 * UTF-8, missing, or deleted) are told apart by looking; an archive cut midway errors its stream with a
 * code; a provider token never leaves in a text; a nested runtime gets its own key, at its own origin.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { UpstreamClient } from '../../src/upstream/http.ts';
import type { UpstreamSession } from '../../src/upstream/port/upstream.ts';
import type { WorkspacePath } from '../../src/upstream/port/workspace.ts';
import { createV0Upstream, type V0Upstream } from '../../src/upstream/v0/upstream.ts';
import { readZip, zipOf } from '../helpers/archives.ts';
import { conversationRecord } from '../helpers/fixtures.ts';
import { multipartParts, type WorkspaceDouble, workspaceDoubleForTest } from '../helpers/workspace-double.ts';

const ID = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const BASE = `/api/conversations/${ID}`;
const CALLER_KEY = 'caller-key-ZX81spectrum';
const RUNTIME_KEY = 'runtime-key-7Hq2Lp9Vb4Nc1Xz8';
const TOKEN = 'ghp_0123456789abcdefABCDEF0123456789abcd';
const path = (raw: string) => raw as WorkspacePath;

/** The adapter over `upstream` for one caller, with a conversation record of `status` at `url`. */
async function v0(
  upstream: WorkspaceDouble,
  record: Record<string, unknown> = {},
): Promise<{ session: UpstreamSession; adapter: V0Upstream }> {
  upstream.on('GET', BASE, { json: conversationRecord(ID, record) });
  const client = new UpstreamClient({ baseUrl: upstream.url, retries: 0, timeoutMs: 2_000 });
  const adapter = createV0Upstream(client, {
    baseUrl: upstream.url,
    runtimeClient: (origin) => new UpstreamClient({ baseUrl: origin, retries: 0, timeoutMs: 2_000 }),
  });
  onTestFinished(async () => {
    await adapter.close();
    await client.close();
  });
  return { session: adapter.forCaller({ kind: 'session-api-key', key: CALLER_KEY }, undefined), adapter };
}

const codeOf = (error: unknown) => (error as { extensions?: Record<string, unknown> }).extensions;

describe('V0 workspace against a hostile 0.53', () => {
  it('a conversation that is not RUNNING is never asked for its workspace (0.53 would restart it)', async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up, { status: 'STOPPED' });
    await expect(session.listWorkspace(ID, null)).rejects.toMatchObject({
      extensions: { code: 'WORKSPACE_NOT_RUNNING', reason: 'STOPPED' },
    });
    up.on('GET', BASE, { json: conversationRecord(ID, { status: 'STARTING' }) });
    await expect(session.readWorkspaceFile(ID, path('a.txt'), 100)).rejects.toMatchObject({
      extensions: { code: 'WORKSPACE_NOT_RUNNING', reason: 'STARTING' },
    });
    up.on('GET', BASE, { json: null });
    await expect(session.workspaceChanges(ID, null)).rejects.toMatchObject({
      extensions: { code: 'CONVERSATION_NOT_FOUND' },
    });
    expect(up.requests.map((r) => r.path)).toEqual([BASE, BASE, BASE]);
  });

  it('HTML where JSON was expected, and a plain 500, are coded; the body is never shown', async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    up.on('GET', `${BASE}/git/changes`, {
      text: '<!DOCTYPE html><html>secret-page</html>',
      headers: { 'content-type': 'text/html' },
    });
    const html = await session.workspaceChanges(ID, null).catch((error: unknown) => error);
    expect(codeOf(html)).toEqual({ code: 'UPSTREAM_ERROR', status: 200 });
    expect(String((html as Error).message)).not.toContain('secret-page');
    up.on('GET', `${BASE}/list-files`, { status: 500, text: 'Internal Server Error' });
    await expect(session.listWorkspace(ID, null)).rejects.toMatchObject({
      extensions: { code: 'UPSTREAM_ERROR', status: 500 },
    });
  });

  it('changes map M/A/D/U (U: an unmerged file, MODIFIED) and keep an unknown status raw', async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    up.on('GET', `${BASE}/git/changes`, {
      json: [
        { status: 'U', path: 'conflict.py' },
        { status: 'M', path: 'src/app.py' },
        { status: 'A', path: 'repo/new.txt' },
        { status: 'D', path: 'old.txt' },
        { status: 'X', path: 'odd.txt' },
        { status: 'M', path: '.git/config' },
        { status: 'M', path: '../outside' },
      ],
    });
    expect(await session.workspaceChanges(ID, null)).toEqual({
      changes: [
        { path: 'conflict.py', status: 'MODIFIED', statusRaw: 'U' },
        { path: 'odd.txt', status: 'UNKNOWN', statusRaw: 'X' },
        { path: 'old.txt', status: 'DELETED', statusRaw: 'D' },
        { path: 'repo/new.txt', status: 'ADDED', statusRaw: 'A' },
        { path: 'src/app.py', status: 'MODIFIED', statusRaw: 'M' },
      ],
      repositories: [''],
    });
    up.on('GET', `${BASE}/git/changes`, { status: 404, json: { error: 'Not a git repository' } });
    expect(await session.workspaceChanges(ID, null)).toEqual({ changes: [], repositories: [] });
    // 0.53 takes no base and has no commits: refused before any call.
    const before = up.requests.length;
    await expect(session.workspaceChanges(ID, 'HEAD')).rejects.toMatchObject({
      extensions: { code: 'NOT_ON_THIS_API', api: 'v0' },
    });
    await expect(session.workspaceCommits(ID, 5)).rejects.toMatchObject({
      extensions: { code: 'NOT_ON_THIS_API', api: 'v0' },
    });
    await expect(session.workspaceCommitChanges(ID, 'abcd')).rejects.toMatchObject({
      extensions: { code: 'NOT_ON_THIS_API', api: 'v0' },
    });
    expect(up.requests.length).toBe(before);
  });

  it('a listing: one level, folders first; a missing folder is null, an empty one []', async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    up.on('GET', `${BASE}/list-files`, (request) => {
      const at = request.query.get('path');
      if (at === null) return { json: ['src/', 'empty/', 'README.md', 'a.txt'] };
      if (at === 'src') return { json: ['src/lib/', 'src/main.py', 'src/.git/', 'src/Zeta.py'] };
      return { json: [] };
    });
    expect(await session.listWorkspace(ID, null)).toEqual([
      { name: 'empty', path: 'empty', kind: 'DIRECTORY' },
      { name: 'src', path: 'src', kind: 'DIRECTORY' },
      { name: 'a.txt', path: 'a.txt', kind: 'FILE' },
      { name: 'README.md', path: 'README.md', kind: 'FILE' },
    ]);
    expect(await session.listWorkspace(ID, path('src'))).toEqual([
      { name: 'lib', path: 'src/lib', kind: 'DIRECTORY' },
      { name: 'main.py', path: 'src/main.py', kind: 'FILE' },
      { name: 'Zeta.py', path: 'src/Zeta.py', kind: 'FILE' },
    ]);
    expect(await session.listWorkspace(ID, path('empty'))).toEqual([]);
    expect(await session.listWorkspace(ID, path('nowhere'))).toBeNull();
    expect(await session.listWorkspace(ID, path('a.txt'))).toBeNull();
  });

  it('a huge file is read only to the cap, on whole characters, and comes back truncated', async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    // 4 MiB of text: more than the client's whole-answer cap would allow buffered, sent in pieces.
    const text = `é${'x'.repeat(4 * 1024 * 1024)}`;
    const json = Buffer.from(JSON.stringify({ code: text }));
    const chunks: Buffer[] = [];
    for (let at = 0; at < json.length; at += 65_536) chunks.push(json.subarray(at, at + 65_536));
    up.on('GET', `${BASE}/select-file`, { chunks, headers: { 'content-type': 'application/json' } });
    const file = await session.readWorkspaceFile(ID, path('big.txt'), 1001);
    expect(file).toEqual({
      path: 'big.txt',
      size: null,
      binary: false,
      text: `é${'x'.repeat(999)}`,
      truncated: true,
    });
    expect(up.calls(`${BASE}/select-file`)[0]?.query.get('file')).toBe('big.txt');
  });

  it("0.53's 415 and its not-UTF-8 500 are binary; a 500 for a missing file is null", async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    up.on('GET', `${BASE}/select-file`, (request) => {
      const file = request.query.get('file');
      if (file === 'logo.png')
        return { status: 415, json: { error: 'Unable to open binary file: /workspace/logo.png' } };
      if (file === 'latin1.txt') {
        return {
          status: 500,
          json: {
            error:
              'Error opening file: **ErrorObservation**\nFile could not be decoded as utf-8: /workspace/latin1.txt.',
          },
        };
      }
      return { status: 500, text: 'Internal Server Error' };
    });
    up.on('GET', `${BASE}/list-files`, { json: ['logo.png', 'latin1.txt', 'there.txt'] });
    const binary = { size: null, binary: true, text: null, truncated: false };
    expect(await session.readWorkspaceFile(ID, path('logo.png'), 100)).toEqual({
      path: 'logo.png',
      ...binary,
    });
    expect(await session.readWorkspaceFile(ID, path('latin1.txt'), 100)).toEqual({
      path: 'latin1.txt',
      ...binary,
    });
    expect(await session.readWorkspaceFile(ID, path('gone.txt'), 100)).toBeNull();
    // There, yet 500: the failure stands, coded.
    await expect(session.readWorkspaceFile(ID, path('there.txt'), 100)).rejects.toMatchObject({
      extensions: { code: 'UPSTREAM_ERROR', status: 500 },
    });
  });

  it("a deleted file's diff (0.53 answers 500) reads as deleted; a token in a file or a diff is scrubbed", async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    up.on('GET', `${BASE}/git/diff`, (request) =>
      ['gone.py', 'never.py'].includes(request.query.get('path') ?? '')
        ? { status: 500, text: 'Internal Server Error' }
        : {
            json: {
              original: `url = https://x-access-token:${TOKEN}@github.com/acme/widgets.git`,
              modified: `token = "${TOKEN}"`,
            },
          },
    );
    up.on('GET', `${BASE}/select-file`, (request) =>
      ['gone.py', 'never.py'].includes(request.query.get('file') ?? '')
        ? { status: 500, text: 'Internal Server Error' }
        : { json: { code: `export GITHUB_TOKEN=${TOKEN}\n` } },
    );
    up.on('GET', `${BASE}/list-files`, { json: ['app.py'] });
    up.on('GET', `${BASE}/git/changes`, { json: [{ status: 'D', path: 'gone.py' }] });
    // Gone and never listed as a change: there is no such file.
    expect(await session.workspaceDiff(ID, path('never.py'), { ref: null, commit: null })).toBeNull();
    expect(await session.workspaceDiff(ID, path('gone.py'), { ref: null, commit: null })).toEqual({
      path: 'gone.py',
      original: null,
      modified: '',
      binary: false,
      tooLarge: false,
    });
    const diff = await session.workspaceDiff(ID, path('app.py'), { ref: null, commit: null });
    expect(diff).toEqual({
      path: 'app.py',
      original: 'url = https://[redacted]@github.com/acme/widgets.git',
      modified: 'token = "[redacted]"',
      binary: false,
      tooLarge: false,
    });
    const file = await session.readWorkspaceFile(ID, path('app.py'), 1000);
    expect(file?.text).toBe('export GITHUB_TOKEN=[redacted]\n');
    expect(JSON.stringify([diff, file])).not.toContain(TOKEN.slice(4, 20));
  });

  it("a path 0.53's diff would hand to the sandbox's shell is refused unsent", async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    await expect(
      session.workspaceDiff(ID, path('a$(touch pwned)'), { ref: null, commit: null }),
    ).rejects.toMatchObject({ extensions: { code: 'WORKSPACE_PATH_REFUSED' } });
    expect(up.calls(`${BASE}/git/diff`)).toEqual([]);
  });

  it('uploads: one multipart body, field `files`, the name is the path; binary content is skipped unsent', async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    up.on('POST', `${BASE}/upload-files`, {
      json: {
        uploaded_files: ['/workspace/docs/a.md'],
        skipped_files: [{ name: 'b.exe', reason: 'File type not allowed' }],
      },
    });
    const result = await session.uploadWorkspaceFiles(ID, [
      { path: path('docs/a.md'), bytes: Buffer.from('# hello\n') },
      { path: path('b.exe'), bytes: Buffer.from('MZ text-ish') },
      { path: path('image.png'), bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]) },
    ]);
    expect(result).toEqual({
      uploaded: ['docs/a.md'],
      skipped: [
        {
          path: 'image.png',
          reason: 'this upstream stores uploads as text: binary content would be corrupted',
        },
        { path: 'b.exe', reason: 'File type not allowed' },
      ],
    });
    const [upload] = up.calls(`${BASE}/upload-files`);
    expect(multipartParts(upload as never)).toEqual([
      { name: 'files', fileName: 'docs/a.md', bytes: Buffer.from('# hello\n') },
      { name: 'files', fileName: 'b.exe', bytes: Buffer.from('MZ text-ish') },
    ]);
  });

  it('an archive cut midway: the stream errors with a code, nothing crashes; .git never leaves', async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    const zip = zipOf({ 'a.txt': 'a'.repeat(300), '.git/config': `url = https://${TOKEN}@github.com/o/r` });
    up.on('GET', `${BASE}/zip-directory`, {
      chunks: [zip.subarray(0, 100), zip.subarray(100, 200), zip.subarray(200)],
      intervalMs: 30,
      cutAfter: 1,
      headers: { 'content-type': 'application/zip' },
    });
    const archive = await session.openWorkspaceArchive(ID);
    expect(archive.contentType).toBe('application/zip');
    expect(archive.fileName).toBe('workspace.zip');
    const reader = archive.body.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value ?? [])).toEqual(zip.subarray(0, first.value?.length ?? 0));
    let broken: unknown = null;
    while (broken === null) {
      broken = await reader.read().then(
        (result) => (result.done ? 'ended' : null),
        (error: unknown) => error,
      );
    }
    expect(codeOf(broken)).toMatchObject({ code: expect.stringMatching(/^UPSTREAM_(UNAVAILABLE|ERROR)$/) });

    // Whole, the same zip arrives without its .git entries (its config holds the token).
    up.on('GET', `${BASE}/zip-directory`, { bytes: zip, headers: { 'content-type': 'application/zip' } });
    const whole = await session.openWorkspaceArchive(ID);
    const bytes = Buffer.from(await new Response(whole.body).arrayBuffer());
    expect(readZip(bytes).map((entry) => entry.name)).toEqual(['a.txt']);
    expect(bytes.toString('latin1')).not.toContain(TOKEN);
  });

  it("a nested runtime's workspace goes to the record's url with the record's key, never the caller's", async () => {
    const up = await workspaceDoubleForTest();
    const runtime = await workspaceDoubleForTest();
    const { session } = await v0(up, {
      url: `${runtime.url}/runtime-7/api/conversations/${ID}`,
      session_api_key: RUNTIME_KEY,
    });
    runtime.on('GET', `/runtime-7/api/conversations/${ID}/list-files`, { json: ['x.txt'] });
    expect(await session.listWorkspace(ID, null)).toEqual([{ name: 'x.txt', path: 'x.txt', kind: 'FILE' }]);
    expect(runtime.requests.map((r) => [r.path, r.headers['x-session-api-key']])).toEqual([
      [`/runtime-7/api/conversations/${ID}/list-files`, RUNTIME_KEY],
    ]);
    expect(up.requests.map((r) => [r.path, r.headers['x-session-api-key']])).toEqual([[BASE, CALLER_KEY]]);
  });

  it('links: the VS Code URL and the app ports (named by port)', async () => {
    const up = await workspaceDoubleForTest();
    const { session } = await v0(up);
    up.on('GET', `${BASE}/vscode-url`, {
      json: { vscode_url: 'http://localhost:41234/?tkn=abc&folder=/workspace' },
    });
    up.on('GET', `${BASE}/web-hosts`, {
      json: { hosts: { 'http://localhost:50001': 50001, 'http://localhost:50000': 50000 } },
    });
    expect(await session.workspaceLinks(ID)).toEqual({
      vscodeUrl: 'http://localhost:41234/?tkn=abc&folder=/workspace',
      appPorts: [
        { name: 'PORT_50000', url: 'http://localhost:50000', port: 50000 },
        { name: 'PORT_50001', url: 'http://localhost:50001', port: 50001 },
      ],
    });
  });
});
