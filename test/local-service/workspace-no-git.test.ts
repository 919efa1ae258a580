/**
 * A service on a machine without git (a git binary that does not run): it starts, its workspaces are
 * plain folders with the seed files, and the git routes answer what the real servers answer for a
 * folder that is no repository; everything else works as with git.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEED_FILES } from '../../src/local-service/workspace/workspaces.ts';
import { readTarGz } from '../helpers/archives.ts';
import { createConversation, localServiceForTest, rest } from '../helpers/local-service.ts';
import { answerOfV0Agent, workspaceFolder } from '../helpers/workspace.ts';
import { agentRest, startConversation, userMessage, waitForStatus } from './v1-harness.ts';

const NO_GIT = 'git-that-is-not-installed';
const P = '/workspace/project';

describe('without git', () => {
  it('V0: plain folders; git/changes [], git/diff the real 500; files, uploads and the agent work', async () => {
    const service = await localServiceForTest({ gitBinary: NO_GIT });
    const id = await createConversation(service.url);
    const folder = workspaceFolder(service.dataDir, 'v0', id);
    const get = (path: string) => rest(service.url, `/api/conversations/${id}/${path}`);
    expect(readFileSync(join(folder, 'README.md'), 'utf8')).toBe(SEED_FILES['README.md']);
    expect(existsSync(join(folder, '.git'))).toBe(false);
    expect((await get('list-files')).body).toEqual(['src/', '.gitignore', 'README.md']);
    await answerOfV0Agent(service.url, id, 'write: notes.txt\nhello');
    expect((await get('select-file?file=notes.txt')).body).toEqual({ code: 'hello\n' });
    expect(await get('git/changes')).toMatchObject({ status: 200, body: [] });
    const diff = await get('git/diff?path=README.md');
    expect([diff.status, diff.headers.get('content-type')]).toEqual([500, 'text/plain; charset=utf-8']);
  });

  it('V1: git changes [], diff nulls, commits empty, git-delta 400; files and the tar.gz archive work', async () => {
    const service = await localServiceForTest({ api: 'v1', gitBinary: NO_GIT });
    const { conversation } = await startConversation(service.url);
    const origin = new URL(conversation.conversation_url as string).origin;
    const agent = (path: string) => rest(origin, path, { key: conversation.session_api_key ?? '' });
    await agentRest(conversation, '/events', {
      method: 'POST',
      body: userMessage('edit: README.md\nSample\n---\nPlain', true),
    });
    await waitForStatus(conversation, 'finished');
    const folder = workspaceFolder(service.dataDir, 'v1', conversation.sandbox_id);
    expect(readFileSync(join(folder, 'README.md'), 'utf8')).toContain('# Plain project');
    expect((await agent(`/api/git/changes?path=${P}`)).body).toEqual([]);
    expect((await agent(`/api/git/diff?path=${P}/README.md`)).body).toEqual({
      modified: null,
      original: null,
    });
    expect((await agent(`/api/git/commits?path=${P}`)).body).toEqual({ commits: [], has_more: false });
    expect(await agent(`/api/file/archive?path=${P}`)).toMatchObject({
      status: 400,
      body: { detail: `Not a git repository: Not a git repository: ${P}` },
    });
    const tar = await fetch(`${origin}/api/file/archive?path=${P}&format=tar.gz`, {
      headers: { 'x-session-api-key': conversation.session_api_key ?? '' },
    });
    expect(tar.headers.get('x-archive-branch')).toBeNull();
    expect(readTarGz(Buffer.from(await tar.arrayBuffer())).map((m) => m.name)).toContain('project/README.md');
    const proxied = await rest(
      service.url,
      `/api/v1/app-conversations/${conversation.id}/git/changes?path=${P}`,
    );
    expect(proxied).toMatchObject({ status: 200, body: [] });
  });
});
