/**
 * The V1 adapter's workspace calls (src/upstream/v1/workspace-*.ts) against a scripted app server and
 * agent server over real sockets (test/helpers/workspace-double.ts), called on the adapter directly. A
 * paused sandbox is never resumed for a read; the app server's git proxies are used where they exist
 * (their 409 is PAUSED, a 502 that hides the agent server's 4xx is asked again of the agent server, a
 * missing proxy is remembered); a deleted file's diff comes from HEAD; a symlink leading out of the
 * project directory is refused before anything is read; a huge file is read only to the cap, a file
 * that is not UTF-8 is binary, a provider token never leaves in a text; HTML, 500s and an archive cut
 * midway are coded; the sandbox key goes to its agent server only.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseWorkspaceCommand } from '../../src/contract/v1/workspace-commands.ts';
import { UpstreamClient } from '../../src/upstream/http.ts';
import type { UpstreamSession } from '../../src/upstream/port/upstream.ts';
import type { WorkspacePath } from '../../src/upstream/port/workspace.ts';
import { createV1Upstream } from '../../src/upstream/v1/upstream.ts';
import {
  multipartParts,
  type WorkspaceDoubleReply,
  workspaceDoubleForTest,
} from '../helpers/workspace-double.ts';

const HEX = '4d1c0b9ee5f34c6a9d2b7f1e8a0c3b21';
const DASHED = '4d1c0b9e-e5f3-4c6a-9d2b-7f1e8a0c3b21';
const SANDBOX_KEY = 'sandbox-key-3dK9pQ0vLx7Wm2Zr8TbN5yHc1GfJ4sA6eU0iO9pXqR';
const CALLER_KEY = 'caller-key-ZX81spectrum';
const TOKEN = 'ghp_0123456789abcdefABCDEF0123456789abcd';
const PROJECT = '/workspace/project';
const PROXY = `/api/v1/app-conversations/${HEX}/git`;
const path = (raw: string) => raw as WorkspacePath;

/** What the sandbox's shell answers: where paths lead (absent: nowhere) and folders' `find` lines. */
interface Sandbox {
  realpaths: Record<string, string>;
  folders: Record<string, string[]>;
}

/** The app server and the agent server of one conversation, and the adapter over them for one caller. */
async function v1(fields: Record<string, unknown> = {}, sandbox?: Sandbox) {
  const app = await workspaceDoubleForTest();
  const agent = await workspaceDoubleForTest();
  app.on('GET', '/api/v1/app-conversations', {
    json: [
      {
        id: HEX,
        sandbox_id: 'oh-agent-server-5kQ2w9XcVbN3mR7tY1uZ8e',
        selected_repository: 'acme/widgets',
        title: 'Fix the tests',
        trigger: 'gui',
        pr_number: [],
        created_at: '2025-11-28T10:00:00.123456Z',
        updated_at: '2025-11-28T10:00:05.000001Z',
        sandbox_status: 'RUNNING',
        execution_status: 'idle',
        conversation_url: `${agent.url}/api/conversations/${DASHED}`,
        session_api_key: SANDBOX_KEY,
        ...fields,
      },
    ],
  });
  const shell = sandbox ?? { realpaths: {}, folders: {} };
  agent.on('POST', '/api/bash/execute_bash_command', (request) => bash(shell, request.json));
  const client = new UpstreamClient({ baseUrl: app.url, retries: 0, timeoutMs: 2_000 });
  const adapter = createV1Upstream(client, {
    agentServerClient: (origin) => new UpstreamClient({ baseUrl: origin, retries: 0, timeoutMs: 2_000 }),
  });
  onTestFinished(async () => {
    await adapter.close();
    await client.close();
  });
  const session: UpstreamSession = adapter.forCaller({ kind: 'session-api-key', key: CALLER_KEY }, undefined);
  return { app, agent, session };
}

/** The agent server's bash route, answering only the gateway's two commands. */
function bash(sandbox: Sandbox, body: unknown): WorkspaceDoubleReply {
  const command = parseWorkspaceCommand(String((body as { command?: unknown })?.command ?? ''));
  if (command === null) return { status: 400, json: { detail: 'unexpected command' } };
  if (command.kind === 'resolve-path') {
    const real = sandbox.realpaths[command.path];
    return {
      json: real
        ? { exit_code: 0, stdout: `${real}\n`, stderr: '' }
        : { exit_code: 1, stdout: '', stderr: '' },
    };
  }
  const lines = sandbox.folders[command.path];
  return {
    json: lines
      ? { exit_code: 0, stdout: lines.map((l) => `${l}\n`).join(''), stderr: '' }
      : { exit_code: 1, stdout: '', stderr: '' },
  };
}

/** A sandbox where each of `paths` (relative) leads to itself. */
function plainSandbox(paths: string[], folders: Record<string, string[]> = {}): Sandbox {
  const realpaths: Record<string, string> = { [PROJECT]: PROJECT };
  for (const p of paths) realpaths[`${PROJECT}/${p}`] = `${PROJECT}/${p}`;
  return { realpaths, folders };
}

const HTML = {
  text: '<!DOCTYPE html><html><body>app</body></html>',
  headers: { 'content-type': 'text/html' },
};
const codeOf = (error: unknown) => (error as { extensions?: Record<string, unknown> }).extensions;

describe('V1 workspace against hostile app and agent servers', () => {
  it('a paused, starting or missing sandbox answers WORKSPACE_NOT_RUNNING and is never resumed', async () => {
    const { app, agent, session } = await v1({
      sandbox_status: 'PAUSED',
      conversation_url: null,
      session_api_key: null,
    });
    await expect(session.readWorkspaceFile(HEX, path('a.txt'), 100)).rejects.toMatchObject({
      extensions: { code: 'WORKSPACE_NOT_RUNNING', reason: 'PAUSED' },
    });
    for (const [status, reason] of [
      ['STARTING', 'STARTING'],
      ['MISSING', 'STOPPED'],
      ['ERROR', 'STOPPED'],
    ]) {
      const other = await v1({ sandbox_status: status, conversation_url: null, session_api_key: null });
      await expect(other.session.workspaceChanges(HEX, null)).rejects.toMatchObject({
        extensions: { code: 'WORKSPACE_NOT_RUNNING', reason },
      });
      expect(other.agent.requests).toEqual([]);
    }
    expect(agent.requests).toEqual([]);
    expect(app.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/v1/app-conversations']);
  });

  it("the proxy's 409 is PAUSED; its 502 is UPSTREAM_UNAVAILABLE; the caller's key goes to the app server only", async () => {
    const { app, agent, session } = await v1();
    app.on('GET', `${PROXY}/changes`, {
      status: 409,
      json: { detail: 'Sandbox is paused; resume it before reading git state.' },
    });
    await expect(session.workspaceChanges(HEX, null)).rejects.toMatchObject({
      extensions: { code: 'WORKSPACE_NOT_RUNNING', reason: 'PAUSED' },
    });
    app.on('GET', `${PROXY}/changes`, { status: 502, json: { detail: 'Failed to reach agent server.' } });
    await expect(session.workspaceChanges(HEX, null)).rejects.toMatchObject({
      extensions: { code: 'UPSTREAM_UNAVAILABLE', status: 502 },
    });
    app.on('GET', `${PROXY}/changes`, (request) => ({
      json:
        request.query.get('path') === PROJECT
          ? [
              { status: 'UPDATED', path: 'widgets/src/app.py' },
              { status: 'ADDED', path: 'notes.md' },
              { status: 'MOVED', path: 'b.txt' },
              { status: 'RENAMED', path: 'c.txt' },
              { status: 'DELETED', path: 'widgets/.git/index' },
            ]
          : [],
    }));
    expect(await session.workspaceChanges(HEX, 'HEAD')).toEqual({
      changes: [
        { path: 'b.txt', status: 'MOVED', statusRaw: 'MOVED' },
        { path: 'c.txt', status: 'UNKNOWN', statusRaw: 'RENAMED' },
        { path: 'notes.md', status: 'ADDED', statusRaw: 'ADDED' },
        { path: 'widgets/src/app.py', status: 'MODIFIED', statusRaw: 'UPDATED' },
      ],
      repositories: [''],
    });
    const asked = app.calls(`${PROXY}/changes`).at(-1);
    expect([asked?.query.get('ref'), asked?.headers['x-session-api-key']]).toEqual(['HEAD', CALLER_KEY]);
    expect(agent.requests).toEqual([]);
    expect(JSON.stringify(app.requests.map((r) => r.headers))).not.toContain(SANDBOX_KEY);
  });

  it('without the proxies (their web page) the agent server answers, and the app server is not asked again', async () => {
    const { app, agent, session } = await v1();
    app.on('GET', `${PROXY}/changes`, HTML);
    agent.on('GET', '/api/git/changes', (request) =>
      request.query.get('path') === `${PROJECT}/widgets`
        ? { json: [{ status: 'UPDATED', path: 'src/app.py' }] }
        : { json: [] },
    );
    const expected = {
      changes: [{ path: 'widgets/src/app.py', status: 'MODIFIED', statusRaw: 'UPDATED' }],
      repositories: ['widgets'],
    };
    expect(await session.workspaceChanges(HEX, null)).toEqual(expected);
    expect(await session.workspaceChanges(HEX, null)).toEqual(expected);
    expect(app.calls(`${PROXY}/changes`)).toHaveLength(1);
    expect(
      agent.calls('/api/git/changes').map((r) => [r.query.get('path'), r.headers['x-session-api-key']]),
    ).toEqual([
      [PROJECT, SANDBOX_KEY],
      [`${PROJECT}/widgets`, SANDBOX_KEY],
      [PROJECT, SANDBOX_KEY],
      [`${PROJECT}/widgets`, SANDBOX_KEY],
    ]);
  });

  it("a 502 hiding the agent server's 400 is asked of the agent server: a file over 1 MiB is tooLarge", async () => {
    const { app, agent, session } = await v1({}, plainSandbox(['big.bin']));
    app.on('GET', `${PROXY}/diff`, { status: 502, json: { detail: 'Agent server error: 400' } });
    agent.on('GET', '/api/git/diff', {
      status: 400,
      json: { detail: 'File too large for git diff: 2097152 bytes (max: 1048576 bytes)' },
    });
    expect(await session.workspaceDiff(HEX, path('big.bin'), { ref: null, commit: null })).toEqual({
      path: 'big.bin',
      original: null,
      modified: null,
      binary: false,
      tooLarge: true,
    });
    expect(agent.calls('/api/git/diff')[0]?.query.get('path')).toBe(`${PROJECT}/big.bin`);
  });

  it('a deleted file\'s diff: its text at HEAD against ""; a token in it is scrubbed', async () => {
    const { app, agent, session } = await v1({}, plainSandbox(['widgets']));
    app.on('GET', `${PROXY}/diff`, { status: 404, json: { detail: 'Not Found' } });
    const sha = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
    agent.on('GET', '/api/git/diff', (request) =>
      request.query.get('commit') === sha
        ? { json: { original: 'older', modified: `old = "${TOKEN}"` } }
        : { status: 400, json: { detail: `File does not exist: ${PROJECT}/widgets/gone.py` } },
    );
    agent.on('GET', '/api/git/commits', {
      json: {
        commits: [
          {
            sha,
            short_sha: 'a1b2c3d',
            subject: 'init',
            author: 'dev',
            timestamp: '2026-01-02T03:04:05+02:00',
          },
        ],
        has_more: true,
      },
    });
    expect(await session.workspaceDiff(HEX, path('widgets/gone.py'), { ref: null, commit: null })).toEqual({
      path: 'widgets/gone.py',
      original: 'old = "[redacted]"',
      modified: '',
      binary: false,
      tooLarge: false,
    });
    expect(agent.calls('/api/git/commits')[0]?.query.get('path')).toBe(`${PROJECT}/widgets`);
    // A path that is neither in the tree nor at HEAD: no such file.
    agent.on('GET', '/api/git/diff', (request) =>
      request.query.get('commit') === sha
        ? { json: { original: '', modified: '' } }
        : { status: 400, json: { detail: 'File does not exist: x' } },
    );
    expect(
      await session.workspaceDiff(HEX, path('widgets/never.py'), { ref: null, commit: null }),
    ).toBeNull();
  });

  it('a diff whose current side the agent server could not decode ("") is binary, told from an empty file', async () => {
    const { agent, session } = await v1({}, plainSandbox(['latin1.txt', 'emptied.txt']));
    agent.on('GET', '/api/git/diff', { json: { original: 'caf\u00e9', modified: '' } });
    agent.on('GET', '/api/file/download', (request) =>
      request.query.get('path')?.endsWith('latin1.txt')
        ? { bytes: Buffer.from([0x63, 0x61, 0x66, 0xe9]) }
        : { bytes: Buffer.alloc(0) },
    );
    const base = { ref: null, commit: null };
    expect(await session.workspaceDiff(HEX, path('latin1.txt'), base)).toMatchObject({
      binary: true,
      original: null,
      modified: null,
    });
    expect(await session.workspaceDiff(HEX, path('emptied.txt'), base)).toMatchObject({
      binary: false,
      original: 'caf\u00e9',
      modified: '',
    });
  });

  it('files: a huge one read to the cap, one not UTF-8 binary, a missing one null, tokens scrubbed', async () => {
    const { agent, session } = await v1(
      {},
      plainSandbox(['big.log', 'latin1.txt', 'nul.bin', 'env.sh', 'gone.txt']),
    );
    const big = Buffer.from(`${'é'.repeat(10)}${'y'.repeat(8 * 1024 * 1024)}`);
    const chunks: Buffer[] = [];
    for (let at = 0; at < big.length; at += 65_536) chunks.push(big.subarray(at, at + 65_536));
    agent.on('GET', '/api/file/download', (request) => {
      const file = request.query.get('path') ?? '';
      if (file.endsWith('big.log')) return { chunks, headers: { 'content-length': String(big.length) } };
      if (file.endsWith('latin1.txt')) return { bytes: Buffer.from('caf\xe9', 'latin1') };
      if (file.endsWith('nul.bin')) return { bytes: Buffer.from('a\u0000b') };
      if (file.endsWith('env.sh'))
        return { bytes: Buffer.from(`git clone https://oauth2:${TOKEN}@gitlab.com/x.git\n`) };
      return { status: 404, json: { detail: 'File not found' } };
    });
    expect(await session.readWorkspaceFile(HEX, path('big.log'), 21)).toEqual({
      path: 'big.log',
      size: big.length,
      binary: false,
      text: `${'é'.repeat(10)}y`,
      truncated: true,
    });
    const binary = { binary: true, text: null, truncated: false };
    expect(await session.readWorkspaceFile(HEX, path('latin1.txt'), 100)).toEqual({
      path: 'latin1.txt',
      size: 4,
      ...binary,
    });
    expect(await session.readWorkspaceFile(HEX, path('nul.bin'), 100)).toEqual({
      path: 'nul.bin',
      size: 3,
      ...binary,
    });
    expect((await session.readWorkspaceFile(HEX, path('env.sh'), 1000))?.text).toBe(
      'git clone https://[redacted]@gitlab.com/x.git\n',
    );
    expect(await session.readWorkspaceFile(HEX, path('gone.txt'), 100)).toBeNull();
    expect(await session.readWorkspaceFile(HEX, path('nowhere.txt'), 100)).toBeNull();
    // Every download went to the resolved path with the sandbox key.
    expect(
      agent.calls('/api/file/download').every((r) => r.headers['x-session-api-key'] === SANDBOX_KEY),
    ).toBe(true);
  });

  it('a symlink leading out of the project directory, or into .git, is refused before anything is read', async () => {
    const sandbox: Sandbox = {
      realpaths: {
        [PROJECT]: PROJECT,
        [`${PROJECT}/passwd`]: '/etc/passwd',
        [`${PROJECT}/cfg`]: `${PROJECT}/widgets/.git/config`,
        [`${PROJECT}/up`]: '/workspace',
      },
      folders: {},
    };
    const { agent, session } = await v1({}, sandbox);
    await expect(session.readWorkspaceFile(HEX, path('passwd'), 100)).rejects.toMatchObject({
      extensions: { code: 'WORKSPACE_PATH_REFUSED' },
    });
    await expect(session.readWorkspaceFile(HEX, path('cfg'), 100)).rejects.toMatchObject({
      extensions: { code: 'WORKSPACE_PATH_REFUSED' },
    });
    await expect(session.listWorkspace(HEX, path('up'))).rejects.toMatchObject({
      extensions: { code: 'WORKSPACE_PATH_REFUSED' },
    });
    const upload = await session.uploadWorkspaceFiles(HEX, [
      { path: path('passwd'), bytes: Buffer.from('x') },
    ]);
    expect(upload.uploaded).toEqual([]);
    expect(upload.skipped).toEqual([
      { path: 'passwd', reason: expect.stringContaining('outside the workspace') },
    ]);
    expect(agent.requests.map((r) => r.path).filter((p) => p !== '/api/bash/execute_bash_command')).toEqual(
      [],
    );
  });

  it("a folder's entries from find's lines, folders first; a missing folder is null", async () => {
    const sandbox = plainSandbox(['src', 'README.md'], {
      [PROJECT]: [
        'd\t4096\tsrc',
        'f\t12\tREADME.md',
        'l\t9\tlink',
        'p\t0\tfifo',
        'garbage',
        'd\t4096\tAlpha',
      ],
      [`${PROJECT}/src`]: [],
    });
    const { agent, session } = await v1({}, sandbox);
    agent.on('GET', '/api/file/search_subdirs', (request) =>
      request.query.get('path')?.endsWith('README.md')
        ? { status: 400, json: { detail: 'Path is not a directory' } }
        : { json: { items: [], next_page_id: null } },
    );
    expect(await session.listWorkspace(HEX, null)).toEqual([
      { name: 'Alpha', path: 'Alpha', kind: 'DIRECTORY' },
      { name: 'src', path: 'src', kind: 'DIRECTORY' },
      { name: 'link', path: 'link', kind: 'FILE' },
      { name: 'README.md', path: 'README.md', kind: 'FILE' },
    ]);
    expect(await session.listWorkspace(HEX, path('src'))).toEqual([]);
    expect(await session.listWorkspace(HEX, path('nowhere'))).toBeNull();
    sandbox.folders[`${PROJECT}/README.md`] = [];
    expect(await session.listWorkspace(HEX, path('README.md'))).toBeNull();
  });

  it('HTML from an agent server is UPSTREAM_ROUTE_MISSING, its 500 UPSTREAM_ERROR; a bad sha is refused unsent', async () => {
    const { agent, session } = await v1({}, plainSandbox(['a.txt']));
    agent.on('GET', '/api/git/commits', HTML);
    await expect(session.workspaceCommits(HEX, 5)).rejects.toMatchObject({
      extensions: { code: 'UPSTREAM_ROUTE_MISSING', route: 'GET /api/git/commits (agent server)' },
    });
    agent.on('GET', '/api/file/download', {
      status: 500,
      json: { detail: 'Internal Server Error', exception: `boom ${SANDBOX_KEY}` },
    });
    const failed = await session.readWorkspaceFile(HEX, path('a.txt'), 10).catch((error: unknown) => error);
    expect(codeOf(failed)).toEqual({ code: 'UPSTREAM_ERROR', status: 500 });
    expect(String((failed as Error).message)).not.toContain(SANDBOX_KEY);
    const before = agent.requests.length;
    await expect(session.workspaceCommitChanges(HEX, 'HEAD; rm -rf /')).rejects.toMatchObject({
      extensions: { code: 'BAD_USER_INPUT' },
    });
    await expect(
      session.workspaceDiff(HEX, path('a.txt'), { ref: null, commit: 'zz' }),
    ).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(agent.requests.length).toBe(before);
  });

  it("commits and a commit's changes, in the selected repository's folder", async () => {
    const { agent, session } = await v1();
    agent.on('GET', '/api/git/commits', {
      json: {
        commits: [
          {
            sha: 'a1b2c3d4e5f6',
            short_sha: 'a1b2c3d',
            subject: 'Fix',
            author: 'Dev',
            timestamp: '2026-01-02T03:04:05+02:00',
          },
          { sha: 7, subject: 'broken record' },
        ],
        has_more: true,
      },
    });
    agent.on('GET', '/api/git/commits/a1b2c3d4e5f6/changes', {
      json: [
        { status: 'DELETED', path: 'old.py' },
        { status: 'ADDED', path: 'new.py' },
      ],
    });
    expect(await session.workspaceCommits(HEX, 500)).toEqual({
      commits: [
        {
          sha: 'a1b2c3d4e5f6',
          shortSha: 'a1b2c3d',
          subject: 'Fix',
          author: 'Dev',
          timestamp: '2026-01-02T01:04:05.000Z',
        },
      ],
      hasMore: true,
    });
    expect(agent.calls('/api/git/commits')[0]?.query.toString()).toBe(
      new URLSearchParams({ path: `${PROJECT}/widgets`, limit: '200' }).toString(),
    );
    expect(await session.workspaceCommitChanges(HEX, 'a1b2c3d4e5f6')).toEqual([
      { path: 'widgets/new.py', status: 'ADDED', statusRaw: 'ADDED' },
      { path: 'widgets/old.py', status: 'DELETED', statusRaw: 'DELETED' },
    ]);
  });

  it('uploads: one request a file, multipart field `file`, the bytes unchanged, to the resolved path', async () => {
    const sandbox = plainSandbox(['docs']);
    const { agent, session } = await v1({}, sandbox);
    agent.on('POST', '/api/file/upload', { json: { success: true } });
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe]);
    const result = await session.uploadWorkspaceFiles(HEX, [
      { path: path('docs/logo.png'), bytes: png },
      { path: path('docs/new/deep.txt'), bytes: Buffer.from('deep') },
    ]);
    expect(result).toEqual({ uploaded: ['docs/logo.png', 'docs/new/deep.txt'], skipped: [] });
    const uploads = agent.calls('/api/file/upload');
    expect(uploads.map((r) => r.query.get('path'))).toEqual([
      `${PROJECT}/docs/logo.png`,
      `${PROJECT}/docs/new/deep.txt`,
    ]);
    expect(uploads.map((r) => multipartParts(r))).toEqual([
      [{ name: 'file', fileName: 'logo.png', bytes: png }],
      [{ name: 'file', fileName: 'deep.txt', bytes: Buffer.from('deep') }],
    ]);
  });

  it('an archive cut midway: the stream errors with a code, nothing crashes', async () => {
    const { agent, session } = await v1();
    agent.on('GET', '/api/file/archive', {
      chunks: [Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('more'), Buffer.from('rest')],
      intervalMs: 30,
      cutAfter: 2,
      headers: { 'content-type': 'application/gzip' },
    });
    const archive = await session.openWorkspaceArchive(HEX);
    expect([archive.contentType, archive.fileName]).toEqual(['application/gzip', 'workspace.tar.gz']);
    expect(agent.calls('/api/file/archive')[0]?.query.toString()).toBe(
      'path=%2Fworkspace%2Fproject&format=tar.gz',
    );
    const reader = archive.body.getReader();
    expect(Array.from((await reader.read()).value ?? [])).toEqual([0x1f, 0x8b, 0x08, 0x00]);
    expect(Buffer.from((await reader.read()).value ?? []).toString()).toBe('more');
    const broken = await reader.read().catch((error: unknown) => error);
    expect(codeOf(broken)).toMatchObject({ code: expect.stringMatching(/^UPSTREAM_(UNAVAILABLE|ERROR)$/) });
  });

  it("links: the sandbox's exposed VS Code and worker URLs", async () => {
    const { app, session } = await v1();
    app.on('GET', '/api/v1/sandboxes', {
      json: [
        {
          id: 'oh-agent-server-5kQ2w9XcVbN3mR7tY1uZ8e',
          status: 'RUNNING',
          session_api_key: SANDBOX_KEY,
          exposed_urls: [
            { name: 'AGENT_SERVER', url: 'http://localhost:40001', port: 40001 },
            { name: 'WORKER_2', url: 'http://localhost:40004', port: 40004 },
            {
              name: 'VSCODE',
              url: `http://localhost:40002/?tkn=${SANDBOX_KEY}&folder=/workspace/project`,
              port: 40002,
            },
            { name: 'WORKER_1', url: 'http://localhost:40003', port: 40003 },
          ],
        },
      ],
    });
    expect(await session.workspaceLinks(HEX)).toEqual({
      vscodeUrl: `http://localhost:40002/?tkn=${SANDBOX_KEY}&folder=/workspace/project`,
      appPorts: [
        { name: 'WORKER_1', url: 'http://localhost:40003', port: 40003 },
        { name: 'WORKER_2', url: 'http://localhost:40004', port: 40004 },
      ],
    });
    expect(app.calls('/api/v1/sandboxes')[0]?.query.get('id')).toBe('oh-agent-server-5kQ2w9XcVbN3mR7tY1uZ8e');
  });
});
