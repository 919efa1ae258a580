/**
 * The V0 scripted agent's file commands (`write:`, `edit:`, `delete:`): they change the conversation's
 * workspace for real and store the events an OpenHands 0.53 agent stores (src/local-service/v0/file-steps.ts),
 * which the gateway reads as file changes and commands; the workspace survives a restart and the
 * routes answer on a nested runtime's own url and key.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CREATED_FILE_TEXT } from '../../src/local-service/agent-script.ts';
import { mapUpstreamEvent } from '../../src/upstream/v0/events.ts';
import {
  createConversation,
  localServiceForTest,
  rest,
  tempDataDirForTest,
} from '../helpers/local-service.ts';
import { answerOfV0Agent, gitIn, workspaceRepository } from '../helpers/workspace.ts';

/** The agent's events of an answer: the actions and observations after the user's message. */
const agentSteps = (events: Array<Record<string, unknown>>) =>
  events.filter((e) => e.source === 'agent' && (e.action !== undefined || e.observation !== undefined));

describe('V0 agent: file commands', () => {
  it('write: a write action and observation; the file holds the lines, each ended by a line break', async () => {
    const service = await localServiceForTest();
    const id = await createConversation(service.url);
    const folder = await workspaceRepository(service.dataDir, 'v0', id);
    const [action, observation] = agentSteps(
      await answerOfV0Agent(service.url, id, 'write: docs/notes.md\n# Notes\nfirst'),
    );
    expect(action).toMatchObject({
      message: 'Writing file: /workspace/docs/notes.md',
      action: 'write',
      args: { path: '/workspace/docs/notes.md', content: '# Notes\nfirst', start: 0, end: -1, thought: '' },
    });
    expect(observation).toMatchObject({
      message: 'I wrote to the file /workspace/docs/notes.md.',
      cause: action?.id,
      observation: 'write',
      content: '',
      extras: { path: '/workspace/docs/notes.md' },
    });
    expect(readFileSync(join(folder, 'docs/notes.md'), 'utf8')).toBe('# Notes\nfirst\n');
    expect(mapUpstreamEvent(action, 'UTC')).toMatchObject({
      kind: 'FILE_WRITE',
      path: '/workspace/docs/notes.md',
    });
    expect(mapUpstreamEvent(observation, 'UTC')).toMatchObject({ kind: 'FILE_WRITE' });
  });

  it("edit: a str_replace edit action and observation with the editor's message and diff; the file changes", async () => {
    const service = await localServiceForTest();
    const id = await createConversation(service.url);
    const folder = await workspaceRepository(service.dataDir, 'v0', id);
    const events = await answerOfV0Agent(
      service.url,
      id,
      'edit: src/app.py\n    return f"Hello, {name}!"\n---\n    return f"Hi, {name}!"',
    );
    const [action, observation] = agentSteps(events);
    expect(action).toMatchObject({
      message: '',
      action: 'edit',
      args: {
        path: '/workspace/src/app.py',
        command: 'str_replace',
        old_str: '    return f"Hello, {name}!"',
        new_str: '    return f"Hi, {name}!"',
        file_text: null,
        impl_source: 'oh_aci',
      },
    });
    expect(observation).toMatchObject({
      message: 'I edited the file /workspace/src/app.py.',
      observation: 'edit',
      extras: {
        path: '/workspace/src/app.py',
        prev_exist: false,
        old_content: '    return f"Hello, {name}!"',
        new_content: '    return f"Hi, {name}!"',
        impl_source: 'oh_aci',
        diff: '--- /workspace/src/app.py\n+++ /workspace/src/app.py\n@@ -2 +2 @@\n-    return f"Hello, {name}!"\n+    return f"Hi, {name}!"',
        _diff_cache: null,
      },
    });
    expect(observation?.content).toBe(
      "The file /workspace/src/app.py has been edited. Here's the result of running `cat -n` on a snippet of /workspace/src/app.py:\n" +
        '     1\tdef greet(name):\n     2\t    return f"Hi, {name}!"\n     3\t\n     4\t\n     5\tif __name__ == "__main__":\n     6\t    print(greet("world"))\n     7\t\n' +
        'Review the changes and make sure they are as expected. Edit the file again if necessary.',
    );
    expect(readFileSync(join(folder, 'src/app.py'), 'utf8')).toContain('return f"Hi, {name}!"');
    expect((await gitIn(folder, ['diff', '--stat'])).stdout).toContain('src/app.py | 2 +-');
    expect(mapUpstreamEvent(action, 'UTC')).toMatchObject({
      kind: 'FILE_EDIT',
      path: '/workspace/src/app.py',
      command: 'str_replace',
    });
    expect(mapUpstreamEvent(observation, 'UTC')).toMatchObject({
      kind: 'FILE_EDIT',
      path: '/workspace/src/app.py',
    });
  });

  it('a failed edit is an edit observation `ERROR:\\n...` and changes nothing; edit: alone creates the file', async () => {
    const service = await localServiceForTest();
    const id = await createConversation(service.url);
    const folder = await workspaceRepository(service.dataDir, 'v0', id);
    const missing = agentSteps(
      await answerOfV0Agent(service.url, id, 'edit: README.md\nnot there\n---\nx'),
    )[1];
    expect(missing).toMatchObject({
      observation: 'edit',
      content:
        'ERROR:\nNo replacement was performed, old_str `not there` did not appear verbatim in /workspace/README.md.',
      extras: { diff: '' },
    });
    const created = agentSteps(await answerOfV0Agent(service.url, id, 'edit: made.txt'));
    expect(created[0]).toMatchObject({
      action: 'edit',
      args: { command: 'create', file_text: CREATED_FILE_TEXT },
    });
    expect(created[1]).toMatchObject({ content: 'File created successfully at: /workspace/made.txt' });
    expect(readFileSync(join(folder, 'made.txt'), 'utf8')).toBe(CREATED_FILE_TEXT);
    const again = agentSteps(await answerOfV0Agent(service.url, id, 'edit: made.txt'))[1];
    expect(again?.content).toBe(
      'ERROR:\nInvalid `path` parameter: /workspace/made.txt. File already exists at: /workspace/made.txt. Cannot overwrite files using command `create`.',
    );
    expect((await gitIn(folder, ['status', '--porcelain'])).stdout).toBe('?? made.txt\n');
  });

  it("delete: the run of rm, exit 0 and the file gone; a missing file exits 1 with rm's message", async () => {
    const service = await localServiceForTest();
    const id = await createConversation(service.url);
    const folder = await workspaceRepository(service.dataDir, 'v0', id);
    const [action, observation] = agentSteps(await answerOfV0Agent(service.url, id, 'delete: src/app.py'));
    expect(action).toMatchObject({ action: 'run', args: { command: 'rm src/app.py' } });
    expect(observation).toMatchObject({
      observation: 'run',
      content: '',
      extras: { metadata: { exit_code: 0 } },
      success: true,
    });
    expect(existsSync(join(folder, 'src/app.py'))).toBe(false);
    expect((await rest(service.url, `/api/conversations/${id}/git/changes`)).body).toEqual([
      { status: 'D', path: 'src/app.py' },
    ]);
    const again = agentSteps(await answerOfV0Agent(service.url, id, 'delete: src/app.py'))[1];
    expect(again).toMatchObject({
      content: "rm: cannot remove 'src/app.py': No such file or directory",
      extras: { metadata: { exit_code: 1 } },
      success: false,
    });
    const outside = agentSteps(await answerOfV0Agent(service.url, id, 'delete: /etc/hostname'))[1];
    expect(outside).toMatchObject({ content: "rm: cannot remove '/etc/hostname': Permission denied" });
    expect(mapUpstreamEvent(action, 'UTC')).toMatchObject({ kind: 'COMMAND', command: 'rm src/app.py' });
  });
});

describe('V0 workspace: restarts and nested runtimes', () => {
  it('a restart keeps the workspace: its files, its repository and the changes the routes report', async () => {
    const dataDir = tempDataDirForTest();
    const first = await localServiceForTest({ dataDir });
    const id = await createConversation(first.url);
    await workspaceRepository(dataDir, 'v0', id);
    await answerOfV0Agent(first.url, id, 'write: kept.txt\nstill here');
    const before = (await rest(first.url, `/api/conversations/${id}/git/changes`)).body;
    await first.close({ keepDataDir: true });
    const second = await localServiceForTest({ dataDir });
    expect((await rest(second.url, `/api/conversations/${id}/git/changes`)).body).toEqual(before);
    expect(before).toEqual([{ status: 'A', path: 'kept.txt' }]);
    expect((await rest(second.url, `/api/conversations/${id}/select-file?file=kept.txt`)).body).toEqual({
      code: 'still here\n',
    });
  });

  it("nested runtime: the routes answer on the conversation's own url with its own key; deleting it deletes the workspace", async () => {
    const service = await localServiceForTest({ nestedRuntime: true, sessionApiKeys: ['main-key'] });
    const id = await createConversation(service.url, {}, 'main-key');
    const folder = await workspaceRepository(service.dataDir, 'v0', id);
    const record = await rest<{ url: string; session_api_key: string }>(
      service.url,
      `/api/conversations/${id}`,
      {
        key: 'main-key',
      },
    );
    const own = record.body.session_api_key;
    expect(own).toBeTruthy();
    expect(await rest(record.body.url, '/git/changes', { key: own })).toMatchObject({
      status: 200,
      body: [],
    });
    expect((await rest(record.body.url, '/list-files', { key: own })).body).toEqual([
      'src/',
      '.gitignore',
      'README.md',
    ]);
    expect(
      (await rest(service.url, `/api/conversations/${id}`, { method: 'DELETE', key: 'main-key' })).body,
    ).toBe(true);
    await expect.poll(() => existsSync(folder)).toBe(false);
  });
});
