/**
 * The workspace in the graph, end to end on both APIs: the real gateway in front of the bundled
 * service, whose conversations have real folders with real git repositories. The agent writes, edits
 * and deletes files (the scripted agent's `write:`, `edit:`, `delete:`); the graph shows the changes
 * and diffs exactly as `git` in that folder does, reads files back, lists folders, takes uploads,
 * hands out an archive link a plain fetch downloads, and tells a live subscriber when the agent edits.
 * Refusals (paths, tenants, links) are checked to make no upstream call.
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { readTarGz, readZip } from '../helpers/archives.ts';
import { APIS, type Api } from '../helpers/both-apis.ts';
import { seedConversation } from '../helpers/both-apis-live.ts';
import { serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { rest } from '../helpers/local-service.ts';
import { changeWorkspace, gitIn, workspaceRepository } from '../helpers/workspace.ts';

const KEY = 'workspace-key-a';
const OTHER = 'workspace-key-b';
// biome-ignore lint/suspicious/noExplicitAny: the answers of this file's own documents, read field by field.
type Json = Record<string, any>;

async function gql(
  gateway: TestGateway,
  query: string,
  variables: Record<string, unknown> = {},
  key = KEY,
): Promise<ExecutionResult<Json>> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': key },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as ExecutionResult<Json>;
}

/** The folder of the conversation's workspace on the service's disk (V1: its sandbox's). */
async function folderOf(api: Api, serviceUrl: string, dataDir: string, id: string): Promise<string> {
  if (api === 'v0') return workspaceRepository(dataDir, 'v0', id);
  const read = await rest<Array<{ sandbox_id: string }>>(serviceUrl, `/api/v1/app-conversations?ids=${id}`, {
    key: KEY,
  });
  return workspaceRepository(dataDir, 'v1', read.body[0]?.sandbox_id as string);
}

/** Sends the agent a message through the graph and waits until the workspace shows `until`. */
async function tellAgent(gateway: TestGateway, id: string, content: string): Promise<void> {
  const sent = await gql(
    gateway,
    'mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }',
    { input: { conversationId: id, content } },
  );
  expect(sent.data?.sendMessage).toEqual({ __typename: 'SendMessagePayload' });
}

const CHANGES = `query($id: ID!) { conversation(id: $id) { workspace { changes {
  changes { path status statusRaw } repositories } } } }`;

/** `git status --porcelain` of the folder as the graph names each status. */
async function gitChanges(folder: string): Promise<Array<{ path: string; status: string }>> {
  const { stdout } = await gitIn(folder, ['status', '--porcelain', '--untracked-files=all', '--no-renames']);
  const name = (code: string) =>
    code.includes('D') ? 'DELETED' : code.includes('?') || code.includes('A') ? 'ADDED' : 'MODIFIED';
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ path: line.slice(3), status: name(line.slice(0, 2)) }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
}

describe.each(APIS)('the workspace on %s', (api) => {
  const start = () =>
    serviceAndGatewayForTest({ api, fastLive: true, service: { sessionApiKeys: [KEY, OTHER] } });

  it('shows what the agent wrote, edited and deleted exactly as git does, with diffs, files and folders', async () => {
    const { service, gateway } = await start();
    const id = await seedConversation(api, service.url, { key: KEY });
    const folder = await folderOf(api, service.url, service.dataDir, id);

    await tellAgent(gateway, id, 'write: notes/todo.md\n- first\n- second');
    await tellAgent(gateway, id, 'edit: README.md\n# \n---\n# Changed ');
    await tellAgent(gateway, id, 'delete: src/app.py');
    const expected = [
      { path: 'README.md', status: 'MODIFIED' },
      { path: 'notes/todo.md', status: 'ADDED' },
      { path: 'src/app.py', status: 'DELETED' },
    ];
    await vi.waitFor(async () => expect(await gitChanges(folder)).toEqual(expected), { timeout: 10_000 });

    const { data, errors } = await gql(gateway, CHANGES, { id });
    expect(errors).toBeUndefined();
    const changes = data?.conversation.workspace.changes;
    expect(changes.changes.map(({ path, status }: Json) => ({ path, status }))).toEqual(
      await gitChanges(folder),
    );
    expect(changes.repositories).toEqual(['']);

    const diff = await gql(
      gateway,
      `query($id: ID!) { conversation(id: $id) { workspace {
        readme: diff(path: "README.md") { path original modified patch binary tooLarge }
        gone: diff(path: "src/app.py") { original modified binary }
        missing: diff(path: "no/such.txt") { path }
        file(path: "notes/todo.md") { text binary truncated }
        directory { edges { node { name path kind } } }
        notes: directory(path: "notes") { edges { node { path kind } } }
        nowhere: directory(path: "no/such/folder") { edges { node { path } } }
      } } }`,
      { id },
    );
    expect(diff.errors).toBeUndefined();
    const workspace = diff.data?.conversation.workspace;
    const { stdout: originalReadme } = await gitIn(folder, ['show', 'HEAD:README.md']);
    // Both upstreams hand the base text over without its last newline (git show, stripped).
    const asShown = (text: string) => text.replace(/\n$/, '');
    expect(workspace.readme).toMatchObject({
      path: 'README.md',
      original: asShown(originalReadme),
      binary: false,
      tooLarge: false,
    });
    expect(workspace.readme.modified).toContain('# Changed ');
    expect(workspace.readme.patch).toMatch(/^--- a\/README\.md/m);
    expect(workspace.readme.patch).toMatch(/^\+# Changed /m);
    const { stdout: originalApp } = await gitIn(folder, ['show', 'HEAD:src/app.py']);
    // 0.53's diff route fails on a deleted file (it reads the file's size first): its base text is
    // unknown there; V1 reads it from HEAD's commit.
    expect(workspace.gone).toEqual({
      original: api === 'v1' ? asShown(originalApp) : null,
      modified: '',
      binary: false,
    });
    expect(workspace.missing).toBeNull();
    // The bytes the agent wrote, as they are on disk (0.53's editor ends a written file with a newline).
    const { readFileSync } = await import('node:fs');
    expect(workspace.file).toEqual({
      text: readFileSync(`${folder}/notes/todo.md`, 'utf8'),
      binary: false,
      truncated: false,
    });
    expect(workspace.file.text.startsWith('- first\n- second')).toBe(true);
    const root = workspace.directory.edges.map((edge: Json) => edge.node);
    expect(root).toEqual(
      expect.arrayContaining([
        { name: 'notes', path: 'notes', kind: 'DIRECTORY' },
        { name: 'README.md', path: 'README.md', kind: 'FILE' },
      ]),
    );
    expect(root.some((entry: Json) => entry.name === '.git')).toBe(false);
    expect(workspace.notes.edges.map((edge: Json) => edge.node)).toEqual([
      { path: 'notes/todo.md', kind: 'FILE' },
    ]);
    expect(workspace.nowhere).toBeNull();
  });

  it('refuses paths out of the workspace and into .git before any upstream call, and scrubs tokens', async () => {
    const { service, gateway } = await start();
    const id = await seedConversation(api, service.url, { key: KEY });
    const folder = await folderOf(api, service.url, service.dataDir, id);
    changeWorkspace(folder, {
      'deploy.sh': 'git clone https://ghp_abcdefghijklmnopqrstuvwx@github.com/o/r.git\n',
    });
    const calls = gateway.calls.length;
    for (const path of ['../outside.txt', '/etc/passwd', '.git/config', 'repo/../../x', 'a\\..\\b']) {
      const { data, errors } = await gql(
        gateway,
        'query($id: ID!, $path: String!) { conversation(id: $id) { workspace { file(path: $path) { text } } } }',
        { id, path },
      );
      expect(data?.conversation.workspace.file).toBeNull();
      expect(errors?.[0]?.extensions).toMatchObject({ code: 'WORKSPACE_PATH_REFUSED', argument: 'path' });
    }
    // Only the conversation reads behind `conversation(id:)`: no workspace route was asked.
    expect(gateway.calls.slice(calls).every((call) => !/file|select|list|diff|bash/.test(call.path))).toBe(
      true,
    );

    const read = await gql(
      gateway,
      'query($id: ID!) { conversation(id: $id) { workspace { file(path: "deploy.sh") { text } } } }',
      { id },
    );
    expect(read.data?.conversation.workspace.file.text).toBe(
      'git clone https://[redacted]@github.com/o/r.git\n',
    );
    expect(JSON.stringify(read)).not.toContain('ghp_');
  });

  it('keeps another tenant out of every workspace field, the upload and the archive link', async () => {
    const { service, gateway } = await start();
    const id = await seedConversation(api, service.url, { key: KEY });
    const theirs = await gql(
      gateway,
      `query($id: ID!) { conversation(id: $id) { workspace { changes { changes { path } } file(path: "README.md") { text } archive { url } } } }`,
      { id },
      OTHER,
    );
    expect(theirs.data?.conversation ?? null).toBeNull();
    expect(JSON.stringify(theirs)).not.toContain('README');

    // Their upload into it writes nothing; their live signal on it is refused.
    const form = new FormData();
    form.append(
      'operations',
      JSON.stringify({
        query: `mutation($input: UploadWorkspaceFilesInput!) { uploadWorkspaceFiles(input: $input) { __typename } }`,
        variables: { input: { conversationId: id, files: [null] } },
      }),
    );
    form.append('map', JSON.stringify({ 0: ['variables.input.files.0'] }));
    form.append('0', new File(['planted\n'], 'planted.txt'));
    const upload = (await (
      await fetch(gateway.url, {
        method: 'POST',
        headers: { 'x-session-api-key': OTHER, 'graphql-preflight': '1' },
        body: form,
      })
    ).json()) as ExecutionResult<Json>;
    expect(upload).toEqual({ data: { uploadWorkspaceFiles: { __typename: 'ConversationNotFoundError' } } });
    const folder = await folderOf(api, service.url, service.dataDir, id);
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${folder}/planted.txt`)).toBe(false);
    const signal = subscribeOverWs<ExecutionResult<Json>>(
      wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': OTHER } }),
      { query: 'subscription($id: ID!) { workspaceChanged(conversationId: $id) { at } }', variables: { id } },
    );
    await signal.finished();
    expect(JSON.stringify(signal.items.concat(signal.error as never))).toMatch(
      /CONVERSATION_NOT_FOUND|UNAUTHENTICATED/,
    );

    const mine = await gql(
      gateway,
      'query($id: ID!) { conversation(id: $id) { workspace { archive { url expiresAt } } } }',
      {
        id,
      },
    );
    const { url, expiresAt } = mine.data?.conversation.workspace.archive ?? {};
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    expect(url).not.toContain(KEY);
    // A link altered by one character, or cut, opens nothing.
    const token = url.split('/').at(-1) as string;
    const flipped = token.slice(0, 20) + (token[20] === 'A' ? 'B' : 'A') + token.slice(21);
    for (const bad of [
      url.replace(token, flipped),
      url.replace(token, token.slice(0, 30)),
      url.replace(token, 'x'),
    ]) {
      const answer = await fetch(bad);
      expect(answer.status).toBe(403);
      expect(await answer.json()).toMatchObject({
        errors: [{ extensions: { code: 'ARCHIVE_LINK_INVALID' } }],
      });
    }
  });

  it('downloads the archive through its link, streamed from the upstream, holding the files', async () => {
    const { service, gateway } = await start();
    const id = await seedConversation(api, service.url, { key: KEY });
    const folder = await folderOf(api, service.url, service.dataDir, id);
    changeWorkspace(folder, { 'notes/hello.txt': 'hello archive\n' });
    const link = await gql(
      gateway,
      'query($id: ID!) { conversation(id: $id) { workspace { archive { url } } } }',
      { id },
    );
    const response = await fetch(link.data?.conversation.workspace.archive.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const bytes = Buffer.from(await response.arrayBuffer());
    if (api === 'v0') {
      expect(response.headers.get('content-type')).toBe('application/zip');
      const entries = readZip(bytes);
      expect(entries.find((entry) => entry.name === 'notes/hello.txt')?.data.toString()).toBe(
        'hello archive\n',
      );
      // 0.53 zips .git too (its config may hold the provider token): the gateway drops it.
      expect(entries.some((entry) => entry.name.startsWith('.git/'))).toBe(false);
      expect(entries.some((entry) => entry.name === 'README.md')).toBe(true);
    } else {
      expect(response.headers.get('content-type')).toMatch(/gzip/);
      const members = readTarGz(bytes);
      const hello = members.find((member) => member.name.endsWith('notes/hello.txt'));
      expect(hello?.data.toString()).toBe('hello archive\n');
      expect(members.some((member) => member.name.includes('.git/'))).toBe(false);
    }
  });

  it('cuts an archive past WORKSPACE_ARCHIVE_MAX_BYTES: the download fails instead of ending short', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api,
      service: { sessionApiKeys: [KEY, OTHER] },
      workspace: { archiveMaxBytes: 64 },
    });
    const id = await seedConversation(api, service.url, { key: KEY });
    await folderOf(api, service.url, service.dataDir, id);
    const link = await gql(
      gateway,
      'query($id: ID!) { conversation(id: $id) { workspace { archive { url } } } }',
      {
        id,
      },
    );
    const download = fetch(link.data?.conversation.workspace.archive.url).then((response) =>
      response.arrayBuffer(),
    );
    await expect(download).rejects.toThrow();
  });

  it('takes an upload through the multipart request, byte-exact where the API keeps bytes', async () => {
    const { service, gateway } = await start();
    const id = await seedConversation(api, service.url, { key: KEY });
    const folder = await folderOf(api, service.url, service.dataDir, id);
    const binary = new Uint8Array([0, 159, 146, 150, 255, 10, 0, 1]);
    const form = new FormData();
    form.append(
      'operations',
      JSON.stringify({
        query: `mutation($input: UploadWorkspaceFilesInput!) { uploadWorkspaceFiles(input: $input) {
          __typename ... on UploadWorkspaceFilesPayload { uploaded skipped { path reason } } } }`,
        variables: { input: { conversationId: id, directory: 'uploads', files: [null, null] } },
      }),
    );
    form.append('map', JSON.stringify({ 0: ['variables.input.files.0'], 1: ['variables.input.files.1'] }));
    form.append('0', new File(['plain text\n'], 'note.txt', { type: 'text/plain' }));
    form.append('1', new File([binary], 'blob.bin', { type: 'application/octet-stream' }));
    // Without a preflight-forcing header a multipart POST is a CSRF attempt.
    const csrf = await fetch(gateway.url, { method: 'POST', body: form });
    expect(csrf.status).toBe(403);
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'x-session-api-key': KEY, 'graphql-preflight': '1' },
      body: form,
    });
    const answer = (await response.json()) as ExecutionResult<Json>;
    expect(answer.errors).toBeUndefined();
    const payload = answer.data?.uploadWorkspaceFiles;
    expect(payload.__typename).toBe('UploadWorkspaceFilesPayload');
    const { readFileSync } = await import('node:fs');
    // V1 writes the bytes as sent; 0.53 writes text through its line-based editor, which may add a
    // newline at the end (docs/workspace.md).
    const note = readFileSync(`${folder}/uploads/note.txt`, 'utf8');
    expect(api === 'v1' ? note : note.replace(/\n\n$/, '\n')).toBe('plain text\n');
    if (api === 'v1') {
      expect(payload.uploaded).toEqual(['uploads/note.txt', 'uploads/blob.bin']);
      expect(new Uint8Array(readFileSync(`${folder}/uploads/blob.bin`))).toEqual(binary);
    } else {
      // 0.53 writes uploads as text, which would corrupt the bytes: the gateway skips such a file.
      expect(payload.uploaded).toEqual(['uploads/note.txt']);
      expect(payload.skipped).toEqual([{ path: 'uploads/blob.bin', reason: expect.any(String) }]);
    }
  });

  it('signals a workspace change within a second of an edit, and not without one', async () => {
    const { service, gateway } = await start();
    const id = await seedConversation(api, service.url, { key: KEY });
    await folderOf(api, service.url, service.dataDir, id);
    const stream = subscribeOverWs<ExecutionResult<Json>>(
      wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': KEY } }),
      {
        query: 'subscription($id: ID!) { workspaceChanged(conversationId: $id) { paths causes at } }',
        variables: { id },
      },
    );
    await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(1), { timeout: 5000 });
    await tellAgent(gateway, id, 'just talking');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(stream.items).toEqual([]);

    await tellAgent(gateway, id, 'write: live.txt\nlive');
    await stream.until((items) => items.length > 0, 5000);
    const signal = stream.items[0]?.data?.workspaceChanged;
    expect(signal.paths).toContain('live.txt');
    expect(signal.causes.length).toBeGreaterThan(0);
  });
});
