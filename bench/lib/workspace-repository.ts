/**
 * Waiting for the local service to make a workspace's repository. The service makes repositories
 * through one queue, 8 git runs at a time, in arrival order, so a conversation created after others
 * gets its repository when theirs are all made: waiting for it also waits out whatever git work those
 * left behind.
 */
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { findGit, type Git } from '../../src/local-service/workspace/git.ts';

/**
 * How long a fresh repository may take: at the end of the create scenario the queue holds the
 * repositories of its ten thousand or so conversations, a few minutes of git work on 2 cores (~200 s
 * on 2026-11-28), which the create scenario waits out this way.
 */
const WAIT_FOR_REPOSITORY_MS = 600_000;

/** The isolated git binary the service runs (under `<dataDir>/workspaces`), to run it as it does. */
export async function serviceGit(dataDir: string): Promise<Git> {
  const root = join(dataDir, 'workspaces');
  const git = await findGit(root, realpathSync(root));
  if (git === null) throw new Error('this scenario needs git');
  return git;
}

/** Resolves once the workspace in `folder` is a repository with its `origin/HEAD` (made by the service). */
export async function waitForRepository(git: Git, folder: string): Promise<void> {
  for (const until = performance.now() + WAIT_FOR_REPOSITORY_MS; ; ) {
    const made = await git.run(folder, ['rev-parse', '--verify', 'refs/remotes/origin/HEAD']);
    if (made.code === 0) return;
    if (performance.now() > until)
      throw new Error(`no repository in ${folder} after ${WAIT_FOR_REPOSITORY_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
