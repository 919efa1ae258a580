/**
 * Both adapters' workspace calls against the real bundled service over real HTTP, each test body once
 * per API (the service's workspace is a real folder and git repository, test/helpers/workspace.ts): the
 * changes the agent (here: the test's hands) made, their diffs (a deleted file's too), a folder, a
 * file, an upload read back, the archive read to its end, and a stopped or paused conversation refused
 * unread. What differs between the APIs on purpose is named in the expectation (docs/upstream-apis.md).
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { UpstreamClient } from '../../src/upstream/http.ts';
import type { UpstreamSession } from '../../src/upstream/port/upstream.ts';
import type { WorkspacePath } from '../../src/upstream/port/workspace.ts';
import { createV0Upstream } from '../../src/upstream/v0/upstream.ts';
import { createV1Upstream } from '../../src/upstream/v1/upstream.ts';
import { APIS, type Api } from '../helpers/both-apis.ts';
import { createConversation, localServiceForTest } from '../helpers/local-service.ts';
import { changeWorkspace, workspaceRepository } from '../helpers/workspace.ts';
import { startConversation } from '../local-service/v1-harness.ts';

const KEY = 'workspace-adapters-key-0123456789';
const path = (raw: string) => raw as WorkspacePath;

/** The adapter of `api` over the service, for one caller; closed with the test. */
function sessionOf(api: Api, url: string): UpstreamSession {
  const client = new UpstreamClient({ baseUrl: url, retries: 0 });
  const factory = (origin: string) => new UpstreamClient({ baseUrl: origin, retries: 0 });
  const adapter =
    api === 'v0'
      ? createV0Upstream(client, { baseUrl: url, runtimeClient: factory })
      : createV1Upstream(client, { agentServerClient: factory });
  onTestFinished(async () => {
    await adapter.close();
    await client.close();
  });
  return adapter.forCaller({ kind: 'session-api-key', key: KEY }, undefined);
}

/** A running conversation of `api` and its workspace folder on disk. */
async function runningWorkspace(api: Api) {
  const service = await localServiceForTest({ api, sessionApiKeys: [KEY] });
  const session = sessionOf(api, service.url);
  if (api === 'v0') {
    const id = await createConversation(service.url, {}, KEY);
    await session.startConversation(id, null);
    await vi.waitFor(
      async () => expect((await session.getConversations([id]))[0]).toMatchObject({ status: 'RUNNING' }),
      {
        timeout: 5_000,
        interval: 20,
      },
    );
    return { service, session, id, folder: await workspaceRepository(service.dataDir, 'v0', id) };
  }
  const { conversation } = await startConversation(service.url, {}, { key: KEY });
  const folder = await workspaceRepository(service.dataDir, 'v1', conversation.sandbox_id as string);
  return { service, session, id: conversation.id as string, folder };
}

describe.each(APIS)('workspace through the %s adapter, against the bundled service', (api) => {
  it('changes, a diff, a deleted file, a folder and a file, as the workspace holds them', async () => {
    const { session, id, folder } = await runningWorkspace(api);
    changeWorkspace(folder, {
      'README.md': '# Changed\n',
      'notes.txt': 'new notes\n',
      'src/app.py': null,
    });
    const changes = await session.workspaceChanges(id, null);
    expect(changes.changes).toEqual([
      { path: 'README.md', status: 'MODIFIED', statusRaw: api === 'v0' ? 'M' : 'UPDATED' },
      { path: 'notes.txt', status: 'ADDED', statusRaw: api === 'v0' ? 'A' : 'ADDED' },
      { path: 'src/app.py', status: 'DELETED', statusRaw: api === 'v0' ? 'D' : 'DELETED' },
    ]);
    expect(changes.repositories).toEqual(['']);
    expect(await session.workspaceDiff(id, path('README.md'), { ref: null, commit: null })).toMatchObject({
      original: expect.stringContaining('# Sample project'),
      modified: '# Changed',
      binary: false,
      tooLarge: false,
    });
    // V0 (0.53) cannot read a deleted file's old text; V1 reads it from HEAD's commit.
    expect(await session.workspaceDiff(id, path('src/app.py'), { ref: null, commit: null })).toEqual({
      path: 'src/app.py',
      original: api === 'v0' ? null : expect.stringContaining('def greet(name):'),
      modified: '',
      binary: false,
      tooLarge: false,
    });
    expect(await session.listWorkspace(id, null)).toEqual(
      expect.arrayContaining([
        { name: 'src', path: 'src', kind: 'DIRECTORY' },
        { name: 'README.md', path: 'README.md', kind: 'FILE' },
        { name: 'notes.txt', path: 'notes.txt', kind: 'FILE' },
      ]),
    );
    expect(await session.listWorkspace(id, path('src'))).toEqual([]);
    expect(await session.listWorkspace(id, path('nowhere'))).toBeNull();
    expect(await session.readWorkspaceFile(id, path('notes.txt'), 4)).toMatchObject({
      path: 'notes.txt',
      binary: false,
      text: 'new ',
      truncated: true,
    });
    expect(await session.readWorkspaceFile(id, path('src/app.py'), 100)).toBeNull();
  });

  it('an upload is read back; a binary file is binary; the archive streams to its end', async () => {
    const { session, id, folder } = await runningWorkspace(api);
    changeWorkspace(folder, { 'logo.bin': Uint8Array.from([0x89, 0x50, 0x00, 0xff]) });
    const uploaded = await session.uploadWorkspaceFiles(id, [
      { path: path('docs/hello.md'), bytes: Buffer.from('# Hello\n') },
    ]);
    expect(uploaded).toEqual({ uploaded: ['docs/hello.md'], skipped: [] });
    // 0.53 writes an upload with its line-based write action, which adds a line break.
    expect((await session.readWorkspaceFile(id, path('docs/hello.md'), 100))?.text).toBe(
      api === 'v0' ? '# Hello\n\n' : '# Hello\n',
    );
    expect(await session.readWorkspaceFile(id, path('logo.bin'), 100)).toMatchObject({
      binary: true,
      text: null,
    });
    const archive = await session.openWorkspaceArchive(id);
    const bytes = Buffer.from(await new Response(archive.body).arrayBuffer());
    // A zip starts with PK\3\4, a gzip with 1f 8b.
    expect([...bytes.subarray(0, 2)]).toEqual(api === 'v0' ? [0x50, 0x4b] : [0x1f, 0x8b]);
    expect(archive.fileName).toBe(api === 'v0' ? 'workspace.zip' : 'workspace.tar.gz');
  });

  it('a stopped (V0) or paused (V1) conversation is refused unread and stays so', async () => {
    const { session, id } = await runningWorkspace(api);
    await session.stopConversation(id);
    await vi.waitFor(
      async () =>
        expect(session.listWorkspace(id, null)).rejects.toMatchObject({
          extensions: { code: 'WORKSPACE_NOT_RUNNING', reason: api === 'v0' ? 'STOPPED' : 'PAUSED' },
        }),
      { timeout: 5_000, interval: 50 },
    );
    expect((await session.getConversations([id]))[0]).toMatchObject({ status: 'STOPPED' });
  });
});
