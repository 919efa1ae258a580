/**
 * A test's hands on the bundled service's workspaces (src/local-service/workspace/): where a V0
 * conversation's or a V1 sandbox's workspace is on disk, waiting for its repository, changing its
 * files directly (the quickest way to give the workspace routes something to report), and running git
 * in it with the service's own isolation to check what the routes answer.
 *
 *   const id = await createConversation(service.url);
 *   const folder = await workspaceRepository(service.dataDir, 'v0', id);
 *   changeWorkspace(folder, { 'README.md': '# changed\n', 'notes.txt': 'new\n', 'src/app.py': null });
 *   // git/changes now lists README.md (M), notes.txt (A), src/app.py (D)
 *
 * A V1 workspace belongs to the sandbox: `workspaceRepository(service.dataDir, 'v1', conversation.sandbox_id)`.
 */
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, vi } from 'vitest';
import { findGit, type Git } from '../../src/local-service/workspace/git.ts';
import { rest, type StoredEvent, storedEvents } from './local-service.ts';

/** The folder of a workspace in a service's data dir (V0: a conversation id; V1: a sandbox id). */
export function workspaceFolder(dataDir: string, api: 'v0' | 'v1', id: string): string {
  return join(dataDir, 'workspaces', api, id);
}

/**
 * The workspace's folder once its repository is complete (the service makes it just after the
 * conversation or sandbox, without blocking the answer that created it).
 */
export async function workspaceRepository(dataDir: string, api: 'v0' | 'v1', id: string): Promise<string> {
  const folder = workspaceFolder(dataDir, api, id);
  await vi.waitFor(
    async () =>
      expect((await gitIn(folder, ['rev-parse', '--verify', 'refs/remotes/origin/HEAD'])).code).toBe(0),
    { timeout: 10_000, interval: 20 },
  );
  return folder;
}

/** Writes each file (text or bytes; parents made) or, for `null`, deletes it, as if the agent had. */
export function changeWorkspace(folder: string, files: Record<string, string | Uint8Array | null>): void {
  for (const [path, content] of Object.entries(files)) {
    const target = join(folder, ...path.split('/'));
    if (content === null) rmSync(target, { force: true });
    else {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
  }
}

const gits = new Map<string, Promise<Git | null>>();

/**
 * Runs git in `folder` the way the service does (no user config, its identity, the repository search
 * stopping at the workspaces folder): exit code and stdout.
 */
export async function gitIn(folder: string, args: string[]): Promise<{ code: number; stdout: string }> {
  const root = join(folder, '..', '..');
  let git = gits.get(root);
  if (!git) {
    git = findGit(root, realpathSync(root));
    gits.set(root, git);
  }
  const found = await git;
  if (found === null) throw new Error('these tests need git');
  const result = await found.run(folder, args);
  return { code: result.code, stdout: result.stdout.toString('utf8') };
}

/**
 * Sends a V0 conversation a user message (`POST .../events`) and waits for the agent's answer to it
 * (the agent state that ends it): answers the events stored for it, the message first. With the
 * scripted agent's `write:`, `edit:` and `delete:` this changes the workspace the way a real agent's
 * tools do, events and all.
 */
export async function answerOfV0Agent(
  serviceUrl: string,
  conversationId: string,
  content: string,
  key?: string,
): Promise<StoredEvent[]> {
  const before = (await storedEvents(serviceUrl, conversationId, key)).length;
  const sent = await rest(serviceUrl, `/api/conversations/${conversationId}/events`, {
    method: 'POST',
    body: { action: 'message', args: { content } },
    key,
  });
  expect(sent.status).toBe(200);
  return vi.waitFor(
    async () => {
      const events = (await storedEvents(serviceUrl, conversationId, key)).slice(before);
      const message = events.find((e) => e.action === 'message' && e.source === 'user');
      const done = events.some(
        (e) =>
          e.observation === 'agent_state_changed' &&
          e.cause === message?.id &&
          ['awaiting_user_input', 'finished'].includes((e.extras as { agent_state: string }).agent_state),
      );
      if (!message || !done) throw new Error('the agent has not answered yet');
      return events.slice(events.indexOf(message));
    },
    { timeout: 10_000, interval: 20 },
  );
}
