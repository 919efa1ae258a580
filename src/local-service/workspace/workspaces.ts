/**
 * The workspaces of one face: a real folder per V0 conversation or per V1 sandbox under the data dir
 * (`<dataDir>/workspaces/<face>/<id>/`), on disk, so it survives a restart. A new workspace gets the
 * {@link SEED_FILES} at once (written synchronously, so the agent's first step finds them) and, when
 * git runs, becomes a repository shaped like a fresh clone: one commit `Initial commit` of exactly the
 * seed files on `main`, with `origin/main` and `origin/HEAD` beside it (no remote URL: nothing is ever
 * fetched), so both APIs' base-ref rules find `origin/main` and report changes against it. The commit
 * is built from the seed texts in memory (`git fast-import`), never from the folder, so an agent that
 * edits a file while the repository is being made cannot slip its edit into the initial commit.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type pino from 'pino';
import { GIT_IDENTITY, type Git } from './git.ts';

/** The files every new workspace starts with (paths relative to its root). */
export const SEED_FILES: Readonly<Record<string, string>> = {
  '.gitignore': '*.log\nbuild/\n',
  'README.md':
    '# Sample project\n\nA workspace of the bundled local service: a real git repository the scripted agent edits.\n',
  'src/app.py':
    'def greet(name):\n    return f"Hello, {name}!"\n\n\nif __name__ == "__main__":\n    print(greet("world"))\n',
};

/** The branch of the initial commit, and the remote-tracking refs a clone would have. */
const BRANCH = 'main';
/** Written last by the repository set-up: its presence means the repository is complete. */
const COMPLETE_MARKER = join('.git', 'refs', 'remotes', 'origin', 'HEAD');

/** A face's workspaces. */
export interface Workspaces {
  /** Null when no git binary runs: workspaces are plain folders then. */
  readonly git: Git | null;
  /** The folder a workspace has (or will have): `<root>/<id>`. */
  dir(id: string): string;
  /**
   * Makes the workspace's folder with the seed files now when it is missing, and starts making its
   * repository when git runs and it has none; answers the folder. Idempotent and cheap.
   */
  ensure(id: string): string;
  /** {@link ensure}, then waits until the repository (if any is being made) is complete. */
  ready(id: string): Promise<string>;
  /** Deletes the workspace folder and everything in it. */
  remove(id: string): Promise<void>;
  /** Waits for the repositories being made; makes no more (the service is closing). */
  close(): Promise<void>;
}

/** The fast-import stream of the initial commit and the remote-tracking branch. */
function initialCommitStream(): Buffer {
  const seconds = Math.floor(Date.now() / 1000);
  const who = `${GIT_IDENTITY.name} <${GIT_IDENTITY.email}> ${seconds} +0000`;
  const data = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    return [Buffer.from(`data ${bytes.length}\n`), bytes, Buffer.from('\n')];
  };
  const parts: Buffer[] = [
    Buffer.from(`commit refs/heads/${BRANCH}\nauthor ${who}\ncommitter ${who}\n`),
    ...data('Initial commit\n'),
  ];
  for (const [path, text] of Object.entries(SEED_FILES)) {
    parts.push(Buffer.from(`M 100644 inline ${path}\n`), ...data(text));
  }
  parts.push(Buffer.from(`\nreset refs/remotes/origin/${BRANCH}\nfrom refs/heads/${BRANCH}\n\n`));
  return Buffer.concat(parts);
}

/**
 * Opens the workspaces kept under `root` (one folder per id). `git` is the isolated git binary
 * ({@link findGit}), or null.
 */
export function openWorkspaces(root: string, git: Git | null, logger: pino.Logger): Workspaces {
  mkdirSync(root, { recursive: true });
  /** Repository set-ups in progress, by id. */
  const settling = new Map<string, Promise<void>>();
  /** Ids whose repository this process has made or tried to make (a failure is not retried). */
  const tried = new Set<string>();
  /** Removals in progress: closing waits for them too. */
  const removing = new Set<Promise<void>>();
  let closed = false;

  function dir(id: string): string {
    // Conversation ids (32 hex) and sandbox ids (`oh-agent-server-<base62>`) only: never a path.
    if (!/^[\w-]{1,128}$/.test(id)) throw new Error('not a workspace id');
    return join(root, id);
  }

  async function makeRepository(folder: string): Promise<void> {
    const steps: Array<{ args: string[]; input?: Buffer }> = [
      { args: ['init', '-q', '--template='] },
      { args: ['symbolic-ref', 'HEAD', `refs/heads/${BRANCH}`] },
      { args: ['fast-import', '--quiet', '--force'], input: initialCommitStream() },
      { args: ['read-tree', `refs/heads/${BRANCH}`] },
      { args: ['symbolic-ref', 'refs/remotes/origin/HEAD', `refs/remotes/origin/${BRANCH}`] },
    ];
    for (const step of steps) {
      const result = await git?.run(folder, step.args, step.input ? { input: step.input } : {});
      if (result && result.code !== 0) {
        logger.error(
          { step: step.args[0], stderr: result.stderr.trim() },
          'could not make a workspace repository',
        );
        return;
      }
    }
  }

  function ensure(id: string): string {
    const folder = dir(id);
    if (settling.has(id)) return folder;
    if (!existsSync(folder)) {
      for (const [path, text] of Object.entries(SEED_FILES)) {
        mkdirSync(dirname(join(folder, path)), { recursive: true });
        writeFileSync(join(folder, path), text);
      }
    } else if (git === null || tried.has(id) || existsSync(join(folder, COMPLETE_MARKER))) {
      return folder;
    }
    if (git !== null && !closed) {
      tried.add(id);
      // Also redone for a folder whose set-up a crash cut short, or made while no git ran.
      const making = makeRepository(folder).finally(() => settling.delete(id));
      settling.set(id, making);
    }
    return folder;
  }

  return {
    git,
    dir,
    ensure,
    async ready(id) {
      const folder = ensure(id);
      await settling.get(id);
      return folder;
    },
    remove(id) {
      const removal = (async () => {
        await settling.get(id);
        await rm(dir(id), { recursive: true, force: true });
        tried.delete(id);
      })();
      removing.add(removal);
      return removal.finally(() => removing.delete(removal));
    },
    async close() {
      closed = true;
      await Promise.allSettled([...settling.values(), ...removing]);
    },
  };
}
