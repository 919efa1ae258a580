/**
 * The V1 scripted agent's file commands (src/local-service/v1/file-steps.ts: FileEditorAction create /
 * str_replace, TerminalAction rm, their observations), which change the sandbox's workspace only when
 * the observation's turn comes; the app server's git proxies; the bash route's two workspace commands;
 * a workspace across a restart and its deletion with the sandbox.
 */
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AppConversationRecord } from '../../src/contract/v1/app-server.ts';
import type { SdkEventRecord } from '../../src/contract/v1/events.ts';
import { listFolderCommand, resolvePathCommand } from '../../src/contract/v1/workspace-commands.ts';
import { SEED_FILES } from '../../src/local-service/workspace/workspaces.ts';
import { mapV1Event } from '../../src/upstream/v1/events.ts';
import { localServiceForTest, rest, tempDataDirForTest } from '../helpers/local-service.ts';
import { changeWorkspace, gitIn, workspaceRepository } from '../helpers/workspace.ts';
import { agentEvents, agentRest, startConversation, userMessage, waitForStatus } from './v1-harness.ts';

const P = '/workspace/project';

/** Sends a message, waits for the run to finish, answers the tool events it added (actions, observations). */
async function toolEventsOf(conversation: AppConversationRecord, text: string): Promise<SdkEventRecord[]> {
  const before = (await agentEvents(conversation)).length;
  await agentRest(conversation, '/events', { method: 'POST', body: userMessage(text, true) });
  await waitForStatus(conversation, 'finished');
  return (await agentEvents(conversation))
    .slice(before)
    .filter((e) => e.kind === 'ActionEvent' || e.kind === 'ObservationEvent');
}

async function conversationWithWorkspace() {
  const service = await localServiceForTest({ api: 'v1' });
  const { conversation } = await startConversation(service.url);
  const folder = await workspaceRepository(service.dataDir, 'v1', conversation.sandbox_id);
  return { service, conversation, folder };
}

describe('V1 agent: file commands', () => {
  it('write: a FileEditorAction create and its FileEditorObservation; the file holds the text as sent', async () => {
    const { conversation, folder } = await conversationWithWorkspace();
    const [action, observation] = await toolEventsOf(conversation, 'write: docs/notes.md\n# Notes\nfirst\n');
    expect(action).toMatchObject({
      kind: 'ActionEvent',
      tool_name: 'file_editor',
      action: {
        command: 'create',
        path: `${P}/docs/notes.md`,
        file_text: '# Notes\nfirst\n',
        kind: 'FileEditorAction',
      },
    });
    expect(observation).toMatchObject({
      kind: 'ObservationEvent',
      tool_name: 'file_editor',
      action_id: action?.id,
      observation: {
        content: [{ type: 'text', text: `File created successfully at: ${P}/docs/notes.md` }],
        is_error: false,
        command: 'create',
        path: `${P}/docs/notes.md`,
        prev_exist: false,
        new_content: '# Notes\nfirst\n',
        kind: 'FileEditorObservation',
      },
    });
    expect(readFileSync(join(folder, 'docs/notes.md'), 'utf8')).toBe('# Notes\nfirst\n');
    expect(mapV1Event(action, 'UTC')).toMatchObject({ kind: 'FILE_WRITE', path: `${P}/docs/notes.md` });
    expect(mapV1Event(observation, 'UTC')).toMatchObject({ kind: 'FILE_EDIT', path: `${P}/docs/notes.md` });
    const again = await toolEventsOf(conversation, 'write: docs/notes.md\nother');
    expect(again[1]).toMatchObject({
      observation: {
        content: [
          {
            text: `Invalid \`path\` parameter: ${P}/docs/notes.md. File already exists at: ${P}/docs/notes.md. Cannot overwrite files using command \`create\`.`,
          },
        ],
        is_error: true,
        command: 'create',
        prev_exist: false,
      },
    });
    expect(readFileSync(join(folder, 'docs/notes.md'), 'utf8')).toBe('# Notes\nfirst\n');
  });

  it('edit: a str_replace FileEditorAction; the observation has the whole file before and after', async () => {
    const { service, conversation, folder } = await conversationWithWorkspace();
    const [action, observation] = await toolEventsOf(
      conversation,
      'edit: README.md\n# Sample project\n---\n# Renamed project',
    );
    const after = (SEED_FILES['README.md'] as string).replace('# Sample project', '# Renamed project');
    expect(action).toMatchObject({
      action: {
        command: 'str_replace',
        path: `${P}/README.md`,
        old_str: '# Sample project',
        new_str: '# Renamed project',
      },
    });
    expect(observation).toMatchObject({
      observation: {
        is_error: false,
        command: 'str_replace',
        path: `${P}/README.md`,
        prev_exist: true,
        old_content: SEED_FILES['README.md'],
        new_content: after,
      },
    });
    expect(readFileSync(join(folder, 'README.md'), 'utf8')).toBe(after);
    expect(mapV1Event(action, 'UTC')).toMatchObject({
      kind: 'FILE_EDIT',
      command: 'str_replace',
      oldContent: '# Sample project',
    });
    const changes = await rest(
      service.url,
      `/api/v1/app-conversations/${conversation.id}/git/changes?path=${P}`,
    );
    expect(changes.body).toEqual([{ status: 'UPDATED', path: 'README.md' }]);
    const diff = await rest(
      service.url,
      `/api/v1/app-conversations/${conversation.id}/git/diff?path=${P}/README.md`,
    );
    expect(diff.body).toEqual({
      modified: after.trimEnd(),
      original: (SEED_FILES['README.md'] as string).trim(),
    });
  });

  it('delete: a TerminalAction rm and its TerminalObservation; the file is gone', async () => {
    const { conversation, folder } = await conversationWithWorkspace();
    const [action, observation] = await toolEventsOf(conversation, 'delete: src/app.py');
    expect(action).toMatchObject({
      tool_name: 'terminal',
      action: { command: 'rm src/app.py', kind: 'TerminalAction' },
    });
    expect(observation).toMatchObject({ observation: { exit_code: 0, kind: 'TerminalObservation' } });
    expect(existsSync(join(folder, 'src/app.py'))).toBe(false);
    const again = await toolEventsOf(conversation, 'delete: src/app.py');
    expect(again[1]).toMatchObject({
      observation: {
        exit_code: 1,
        content: [{ text: "rm: cannot remove 'src/app.py': No such file or directory" }],
      },
    });
  });

  it('under AlwaysConfirm a rejected edit changes nothing; an accepted one changes the file when its observation comes', async () => {
    const { conversation, folder } = await conversationWithWorkspace();
    await agentRest(conversation, '/confirmation_policy', {
      method: 'POST',
      body: { policy: { kind: 'AlwaysConfirm' } },
    });
    const respond = (accept: boolean) =>
      agentRest(conversation, '/events/respond_to_confirmation', { method: 'POST', body: { accept } });
    await agentRest(conversation, '/events', {
      method: 'POST',
      body: userMessage('write: held.txt\nheld', true),
    });
    await waitForStatus(conversation, 'waiting_for_confirmation');
    expect(existsSync(join(folder, 'held.txt'))).toBe(false);
    await respond(false);
    await waitForStatus(conversation, 'finished');
    expect(existsSync(join(folder, 'held.txt'))).toBe(false);
    await agentRest(conversation, '/events', {
      method: 'POST',
      body: userMessage('write: held.txt\naccepted', true),
    });
    await waitForStatus(conversation, 'waiting_for_confirmation');
    await respond(true);
    await waitForStatus(conversation, 'finished');
    expect(readFileSync(join(folder, 'held.txt'), 'utf8')).toBe('accepted');
  });
});

describe('V1 app server: git proxies', () => {
  it('422 without a path or with a non-UUID id; 404 not reachable for an unknown one; 409 paused; 502 for an agent-server 400', async () => {
    const { service, conversation } = await conversationWithWorkspace();
    const proxy = (id: string, query: string) =>
      rest(service.url, `/api/v1/app-conversations/${id}/git/${query}`);
    expect((await proxy(conversation.id, 'changes')).body).toMatchObject({
      detail: [{ type: 'missing', loc: ['query', 'path'] }],
    });
    expect((await proxy('nope', `changes?path=${P}`)).body).toMatchObject({
      detail: [{ type: 'uuid_parsing' }],
    });
    const unknown = '0123456789abcdef0123456789abcdef';
    expect(await proxy(unknown, `diff?path=${P}/README.md`)).toMatchObject({
      status: 404,
      body: { detail: 'Conversation 01234567-89ab-cdef-0123-456789abcdef is not reachable' },
    });
    expect(await proxy(conversation.id, `changes?path=${P}&ref=nope`)).toMatchObject({
      status: 502,
      body: { detail: 'Agent server error: 400' },
    });
    expect(await proxy(conversation.id, `diff?path=${P}/README.md`)).toMatchObject({
      status: 200,
      body: { modified: expect.any(String) },
    });
    await rest(service.url, `/api/v1/sandboxes/${conversation.sandbox_id}/pause`, { method: 'POST' });
    expect(await proxy(conversation.id, `changes?path=${P}`)).toMatchObject({
      status: 409,
      body: { detail: 'Sandbox is paused; resume it before reading git state.' },
    });
  });
});

describe('V1 workspace: the bash route, restarts, deletion', () => {
  it('execute_bash_command answers the two workspace commands from the folder; anything else as the scripted terminal', async () => {
    const { conversation, folder } = await conversationWithWorkspace();
    symlinkSync(join(folder, 'src'), join(folder, 'linked'));
    const run = (command: string) =>
      rest<{ exit_code: number; stdout: string | null; stderr: string | null; kind: string }>(
        new URL(conversation.conversation_url as string).origin,
        '/api/bash/execute_bash_command',
        { method: 'POST', key: conversation.session_api_key ?? '', body: { command } },
      );
    const listed = await run(listFolderCommand(P));
    expect(listed.body).toMatchObject({ exit_code: 0, stderr: null, kind: 'BashOutput' });
    expect(listed.body.stdout?.split('\n').map((line) => line.replace(/\t\d+\t/, '\t'))).toEqual([
      'f\t.gitignore',
      'f\tREADME.md',
      'l\tlinked',
      'd\tsrc',
      '',
    ]);
    expect((await run(listFolderCommand(`${P}/nope`))).body).toMatchObject({ exit_code: 1, stdout: null });
    expect((await run(resolvePathCommand(`${P}/linked/app.py`))).body).toMatchObject({
      exit_code: 0,
      stdout: `${P}/src/app.py\n`,
    });
    expect((await run(resolvePathCommand('/etc/hostname'))).body).toMatchObject({
      exit_code: 1,
      stdout: null,
    });
    expect((await run('echo hi')).body).toMatchObject({ exit_code: 0, stdout: 'hi\n' });
    expect((await run('ls')).body).toMatchObject({ exit_code: 127, stderr: 'bash: ls: command not found\n' });
  });

  it("a restart keeps the sandbox's workspace; deleting the sandbox deletes it", async () => {
    const dataDir = tempDataDirForTest();
    const first = await localServiceForTest({ api: 'v1', dataDir });
    const { conversation } = await startConversation(first.url);
    const folder = await workspaceRepository(dataDir, 'v1', conversation.sandbox_id);
    changeWorkspace(folder, { 'kept.txt': 'kept\n' });
    await first.close({ keepDataDir: true });
    const second = await localServiceForTest({ api: 'v1', dataDir });
    expect(
      (await rest(second.url, `/api/v1/sandboxes/${conversation.sandbox_id}/resume`, { method: 'POST' }))
        .status,
    ).toBe(200);
    const record = (
      await rest<AppConversationRecord[]>(second.url, `/api/v1/app-conversations?ids=${conversation.id}`)
    ).body[0];
    const changes = await rest(
      second.url,
      `/api/v1/app-conversations/${conversation.id}/git/changes?path=${P}`,
    );
    expect(changes.body).toEqual([{ status: 'ADDED', path: 'kept.txt' }]);
    expect((await gitIn(folder, ['status', '--porcelain'])).stdout).toBe('?? kept.txt\n');
    expect(record?.sandbox_status).toBe('RUNNING');
    expect(
      (await rest(second.url, `/api/v1/sandboxes/${conversation.sandbox_id}`, { method: 'DELETE' })).status,
    ).toBe(200);
    expect(existsSync(folder)).toBe(false);
  });
});
