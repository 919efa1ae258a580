/**
 * Scenario: a workspace's review view, the changed files and one file's diff with its unified patch,
 * `conversation(id:) { workspace { changes { ... } diff(path:) { original modified patch } } }` through
 * the gateway vs the upstream calls the gateway makes for that answer, sent by the bench client straight
 * to the service one after the other (bench/lib/call-sequence.ts), at one connection and at saturation:
 * - V0: `GET /api/conversations/{id}` twice (the `conversation` field, then the workspace, opened once
 *   per operation by reading the record: src/upstream/v0/workspace-target.ts, workspace-calls.ts),
 *   `GET .../git/changes` and `GET .../git/diff?path=<file>`;
 * - V1: the app server's batch get `GET /api/v1/app-conversations?ids=` (once per operation), its
 *   proxies `GET /api/v1/app-conversations/{id}/git/changes?path=/workspace/project` and
 *   `.../git/diff?path=<where the file leads>`, and before the diff the agent server's
 *   `POST /api/bash/execute_bash_command` with `realpath -e -- '<file>'` and the sandbox's key (where the
 *   path leads: src/upstream/v1/workspace-git.ts and workspace-shell.ts).
 * Before measuring, the gateway's own upstream calls for one request (its `upstream_requests_total`)
 * must be exactly the direct side's, so the two sides do the same upstream work.
 *
 * The workspace: the bundled service's repository of the conversation (V0) or of the run's sandbox
 * (V1), given a project commit (set as `origin/main`, the base both APIs compare with), then 5 files
 * modified, 2 added and 1 deleted on disk, as an agent leaves them; the diffed file is ~6.6 KiB, 8 of
 * its handlers changed and one added (a patch of 8 hunks, 2.3 KB).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { resolvePathCommand } from '../../src/contract/v1/workspace-commands.ts';
import type { Git } from '../../src/local-service/workspace/git.ts';
import { type CallSequence, saturateSequence } from '../lib/call-sequence.ts';
import { type BenchContext, graphqlTarget, restTarget, upstreamTarget } from '../lib/context.ts';
import { compareGatewayWithDirect } from '../lib/http-comparison.ts';
import type { HttpTarget } from '../lib/http-load.ts';
import type { ScenarioResult } from '../lib/report.ts';
import { gatewayUpstreamCalls } from '../lib/upstream-calls.ts';
import { v1AgentOf } from '../lib/v1-upstream.ts';
import { serviceGit, waitForRepository } from '../lib/workspace-repository.ts';
import { createConversation } from './fanout.ts';

const WORKSPACE_QUERY = `query BenchWorkspace($id: ID!, $path: String!) {
  conversation(id: $id) {
    workspace {
      changes { changes { path status } repositories }
      diff(path: $path) { original modified patch }
    }
  }
}`;

/** The file whose diff is read. */
const DIFF_PATH = 'src/handlers.py';
/** The sandbox folder of a V1 workspace (src/upstream/v1/workspace-target.ts `PROJECT_DIR`). */
const PROJECT_DIR = '/workspace/project';
/**
 * The `timeout` (seconds) the gateway sends with a bash command: its upstream timeout (10 s by default)
 * rounded up (src/upstream/v1/workspace-shell.ts).
 */
const BASH_TIMEOUT_SECONDS = 10;

/** A module of 48 small handlers (~6.5 KiB); `changed`: every 6th edited and one added at the end. */
function handlers(changed: boolean): string {
  const parts = ['"""Request handlers of the sample service."""\n\nimport json\n'];
  for (let i = 1; i <= 48; i++) {
    const result =
      changed && i % 6 === 0
        ? `{"handler": ${i}, "items": payload.get("items", []), "count": len(payload)}`
        : `{"handler": ${i}, "items": payload.get("items", [])}`;
    parts.push(
      `\n\ndef handle_${i}(request):\n    payload = json.loads(request.body or "{}")\n    return ${result}\n`,
    );
  }
  if (changed) parts.push('\n\ndef handle_health(request):\n    return {"status": "ok"}\n');
  return parts.join('');
}

/** The project as committed (beside the service's seed files, README.md, src/app.py, .gitignore). */
const PROJECT_FILES: Readonly<Record<string, string>> = {
  [DIFF_PATH]: handlers(false),
  'src/models.py': 'class Item:\n    def __init__(self, name):\n        self.name = name\n',
  'src/util.py': 'def clamp(value, low, high):\n    return max(low, min(high, value))\n',
  'tests/test_legacy.py': 'def test_nothing():\n    assert True\n',
};

/** What the agent left: 5 modified, 2 added, 1 deleted (null). */
const AGENT_CHANGES: Readonly<Record<string, string | null>> = {
  'README.md': '# Sample project\n\nA workspace the benchmark changed: handlers, models and tests.\n',
  'src/app.py': 'from handlers import handle_health\n\n\ndef main():\n    print(handle_health(None))\n',
  [DIFF_PATH]: handlers(true),
  'src/models.py':
    'class Item:\n    def __init__(self, name, count=0):\n        self.name = name\n        self.count = count\n',
  'src/util.py':
    'def clamp(value, low, high):\n    return low if value < low else high if value > high else value\n',
  'src/routes.py': 'ROUTES = {"/health": "handle_health"}\n',
  'tests/test_handlers.py':
    'from handlers import handle_health\n\n\ndef test_health():\n    assert handle_health(None)\n',
  'tests/test_legacy.py': null,
};
const EXPECTED = { MODIFIED: 5, ADDED: 2, DELETED: 1 } as const;

/** Writes each file (parents made) or, for null, deletes it. */
function writeFiles(folder: string, files: Readonly<Record<string, string | null>>): void {
  for (const [path, text] of Object.entries(files)) {
    const target = join(folder, ...path.split('/'));
    if (text === null) rmSync(target, { force: true });
    else {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
  }
}

async function gitOk(git: Git, folder: string, args: string[]): Promise<void> {
  const result = await git.run(folder, args);
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} in ${folder}: ${result.stderr.trim()}`);
}

/**
 * Gives the workspace in `folder` the project commit (on `main` and as `origin/main`, as if cloned
 * with it) and the agent's changes. Git runs as the service runs it (src/local-service/workspace/git.ts:
 * no user config, its identity), once the service has made the repository.
 */
async function seedWorkspace(dataDir: string, folder: string): Promise<void> {
  const git = await serviceGit(dataDir);
  await waitForRepository(git, folder);
  writeFiles(folder, PROJECT_FILES);
  await gitOk(git, folder, ['add', '--', ...Object.keys(PROJECT_FILES)]);
  await gitOk(git, folder, ['commit', '-q', '-m', 'Project files']);
  await gitOk(git, folder, ['update-ref', 'refs/remotes/origin/main', 'HEAD']);
  writeFiles(folder, AGENT_CHANGES);
}

/** A direct call and the gateway's label of the same upstream call (`METHOD route`, ids as `:id`). */
interface DirectCall {
  route: string;
  target: HttpTarget;
}

/** The changed files of a V0 or V1 answer must be the 8 the seed made. */
function checkChanges(entries: unknown): void {
  if (!Array.isArray(entries) || entries.length !== 8)
    throw new Error(`expected 8 changed files, got ${JSON.stringify(entries).slice(0, 300)}`);
}

/** A diff answer must carry both texts. */
function checkDiff(body: unknown): void {
  const { original, modified } = (body ?? {}) as { original?: unknown; modified?: unknown };
  if (typeof original !== 'string' || typeof modified !== 'string' || original === modified)
    throw new Error(`expected both texts of ${DIFF_PATH}, got ${JSON.stringify(body).slice(0, 300)}`);
}

/** V0: the record read twice, the changes, the diff, as the gateway sends them. */
function v0Calls(context: BenchContext, id: string): DirectCall[] {
  const record: DirectCall = {
    route: 'GET /api/conversations/:id',
    target: restTarget(context, 'GET', `/api/conversations/${id}`, undefined, (body) => {
      if ((body as { status?: string } | null)?.status !== 'RUNNING')
        throw new Error(`the conversation is not running: ${JSON.stringify(body).slice(0, 300)}`);
    }),
  };
  return [
    record,
    record,
    {
      route: 'GET /api/conversations/:id/git/changes',
      target: restTarget(context, 'GET', `/api/conversations/${id}/git/changes`, undefined, checkChanges),
    },
    {
      route: 'GET /api/conversations/:id/git/diff',
      target: restTarget(
        context,
        'GET',
        `/api/conversations/${id}/git/diff?${new URLSearchParams({ path: DIFF_PATH })}`,
        undefined,
        checkDiff,
      ),
    },
  ];
}

/**
 * V1: the batch get, the changes through the app server, where the file leads (the agent server's
 * bash route), the diff of that path through the app server, as the gateway sends them.
 */
async function v1Calls(context: BenchContext, id: string): Promise<DirectCall[]> {
  const agent = await v1AgentOf(context.serviceUrl, context.key, id);
  const agentRoot = agent.conversationUrl.split('/api/conversations')[0] ?? '';
  const absolute = `${PROJECT_DIR}/${DIFF_PATH}`;
  // The gateway diffs the path the sandbox resolves (a link would lead elsewhere); here it is the file.
  const resolves = (body: unknown) => {
    const { exit_code, stdout } = (body ?? {}) as { exit_code?: unknown; stdout?: unknown };
    if (exit_code !== 0 || typeof stdout !== 'string' || stdout.trim() !== absolute)
      throw new Error(`realpath answered ${JSON.stringify(body).slice(0, 300)}`);
  };
  const app = `/api/v1/app-conversations/${id}/git`;
  return [
    {
      route: 'GET /api/v1/app-conversations',
      target: restTarget(context, 'GET', `/api/v1/app-conversations?ids=${id}`, undefined, (body) => {
        const [record] = body as Array<{ sandbox_status?: string } | null>;
        if (record?.sandbox_status !== 'RUNNING')
          throw new Error(`the sandbox is not running: ${JSON.stringify(body).slice(0, 300)}`);
      }),
    },
    {
      route: 'GET /api/v1/app-conversations/:id/git/changes',
      target: restTarget(
        context,
        'GET',
        `${app}/changes?${new URLSearchParams({ path: PROJECT_DIR })}`,
        undefined,
        checkChanges,
      ),
    },
    {
      route: 'POST /api/bash/execute_bash_command',
      target: upstreamTarget(
        `${agentRoot}/api/bash/execute_bash_command`,
        agent.sessionApiKey,
        'POST',
        { command: resolvePathCommand(absolute), cwd: PROJECT_DIR, timeout: BASH_TIMEOUT_SECONDS },
        resolves,
      ),
    },
    {
      route: 'GET /api/v1/app-conversations/:id/git/diff',
      target: restTarget(
        context,
        'GET',
        `${app}/diff?${new URLSearchParams({ path: absolute })}`,
        undefined,
        checkDiff,
      ),
    },
  ];
}

/**
 * V0: waits until the conversation's agent runs (its workspace routes answer only then). Its repository
 * is usually made later than its agent starts, but not when the service's git queue was empty.
 */
async function waitUntilRunning(context: BenchContext, id: string): Promise<void> {
  for (const until = performance.now() + 60_000; performance.now() < until; ) {
    const response = await fetch(`${context.serviceUrl}/api/conversations/${id}`, {
      headers: { 'x-session-api-key': context.key },
    });
    const record = (await response.json()) as { status?: string } | null;
    if (record?.status === 'RUNNING') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`conversation ${id} did not reach RUNNING within 60 s`);
}

/** The seeded conversation's two sides, and the direct side's calls by the gateway's route labels. */
async function workspaceTargets(
  context: BenchContext,
): Promise<{ gateway: HttpTarget; direct: CallSequence; routes: string[] }> {
  const id = await createConversation(context);
  // V0: the conversation's own workspace; V1: its sandbox's, which it shares with the run's others.
  const owner = context.api === 'v1' ? context.sandboxId : id;
  if (owner === null) throw new Error('V1 stack without a sandbox');
  await seedWorkspace(context.dataDir, join(context.dataDir, 'workspaces', context.api, owner));
  if (context.api === 'v0') await waitUntilRunning(context, id);
  const gateway = graphqlTarget(context, WORKSPACE_QUERY, { id, path: DIFF_PATH }, (data) => {
    const workspace = (
      data.conversation as {
        workspace?: {
          changes?: { changes?: Array<{ status: string }> };
          diff?: { patch?: string | null };
        };
      } | null
    )?.workspace;
    const statuses = workspace?.changes?.changes?.map((change) => change.status) ?? [];
    const count = (status: string) => statuses.filter((s) => s === status).length;
    const patch = workspace?.diff?.patch ?? '';
    if (
      statuses.length !== 8 ||
      Object.entries(EXPECTED).some(([status, n]) => count(status) !== n) ||
      !patch.includes('@@')
    )
      throw new Error(`unexpected workspace answer: ${JSON.stringify(data).slice(0, 300)}`);
  });
  const calls = context.api === 'v1' ? await v1Calls(context, id) : v0Calls(context, id);
  return { gateway, direct: { calls: calls.map((c) => c.target) }, routes: calls.map((c) => c.route) };
}

/** Runs the workspace scenario. */
export async function runWorkspace(context: BenchContext): Promise<ScenarioResult> {
  const { gateway, direct, routes } = await workspaceTargets(context);
  // Once first: what the gateway finds out on first use (its API, the app server's proxies) is not counted.
  await gatewayUpstreamCalls(context.gatewayUrl, gateway);
  const made = await gatewayUpstreamCalls(context.gatewayUrl, gateway);
  const claimed = [...routes].sort();
  if (made.join('\n') !== claimed.join('\n')) {
    throw new Error(
      `the direct side no longer makes the gateway's upstream calls (update bench/scenarios/workspace.ts):\n` +
        `  gateway: ${made.join(', ')}\n  direct:  ${claimed.join(', ')}`,
    );
  }
  // A saturation run holds only some 100 to 300 operations (the service's git work bounds them), too few
  // for the gateway's first-use costs (V8 tiering up the workspace paths, its heap growing to size) to
  // vanish in: the gateway gets one saturation run first, not measured (the service warms up with it).
  await saturateSequence(
    { calls: [gateway] },
    context.connections,
    context.seconds * (context.quick ? 1 : 2),
  );
  const result = await compareGatewayWithDirect(context, 'workspace', { gateway, direct });
  return {
    ...result,
    details: {
      ...(result.details as object),
      upstreamCallsPerRequest: routes,
      diffedFileBytes: handlers(true).length,
    },
  };
}
