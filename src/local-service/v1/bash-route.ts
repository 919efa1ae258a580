/**
 * One sandbox's `POST /api/bash/execute_bash_command` (agent server v1.43.1,
 * `openhands-agent-server/openhands/agent_server/bash_router.py`; body `{"command", "cwd"?, "timeout"?}`,
 * answer the command's last `BashOutput`). No shell runs in the local service: it answers the two
 * commands the gateway sends for what the agent server has no route for (contract/v1/workspace-commands.ts:
 * one folder's entries, where a path leads) from the sandbox's workspace folder, as `find` and
 * `realpath` would inside the sandbox, and any other command as the scripted terminal does (`echo`,
 * `exit <n>`, `true`, `false`; anything else 127). Paths outside the project dir, or leading out of
 * it through a link, are answered as missing ones.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { isJsonObject } from '../../contract/json.ts';
import { parseWorkspaceCommand } from '../../contract/v1/workspace-commands.ts';
import { simulateCommand } from '../agent-script.ts';
import { type ApiRequest, type ApiResponse, json, type Route, validationError } from '../api-route.ts';
import { issue, missingIssue } from '../validation/issue.ts';
import { confinedHostPath } from '../workspace/sandbox-paths.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { utcTimestamp } from './event-factory.ts';
import { WORKING_DIR } from './file-steps.ts';

/** What the bash route needs. */
export interface BashRouteDeps {
  sandboxId: string;
  workspaces: Workspaces;
}

/** A command's exit code and output (null where the real one sends no output piece). */
interface BashResult {
  exitCode: number;
  stdout: string | null;
  stderr: string | null;
}

/** find's `%y`: the entry's type letter. */
function typeLetter(path: string): string {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return 'l';
  if (stat.isDirectory()) return 'd';
  if (stat.isFIFO()) return 'p';
  if (stat.isSocket()) return 's';
  if (stat.isCharacterDevice()) return 'c';
  if (stat.isBlockDevice()) return 'b';
  return 'f';
}

/** `find <dir> -mindepth 1 -maxdepth 1 ! -name .git -printf '%y\t%s\t%f\n'`. */
function listFolder(root: string, path: string): BashResult {
  const host = confinedHostPath(root, WORKING_DIR, path);
  if (host === null || !existsSync(host)) {
    return { exitCode: 1, stdout: null, stderr: `find: '${path}': No such file or directory` };
  }
  if (!statSync(host).isDirectory()) return { exitCode: 0, stdout: null, stderr: null };
  const lines = readdirSync(host)
    .filter((name) => name !== '.git')
    .sort()
    .map((name) => `${typeLetter(join(host, name))}\t${lstatSync(join(host, name)).size}\t${name}\n`);
  return { exitCode: 0, stdout: lines.join('') || null, stderr: null };
}

/** `realpath -e -- <path>`: the sandbox path it leads to once links are followed. */
function resolvePath(root: string, path: string): BashResult {
  const missing: BashResult = {
    exitCode: 1,
    stdout: null,
    stderr: `realpath: ${path}: No such file or directory`,
  };
  const host = confinedHostPath(root, WORKING_DIR, path);
  if (host === null || !existsSync(host)) return missing;
  const rel = relative(realpathSync(root), realpathSync(host)).split(sep).filter(Boolean);
  return { exitCode: 0, stdout: `${[WORKING_DIR, ...rel].join('/')}\n`, stderr: null };
}

/** Builds one agent server's bash route. */
export function createBashRoute(deps: BashRouteDeps): Route {
  async function execute(request: ApiRequest): Promise<ApiResponse> {
    const body = isJsonObject(request.body) ? request.body : null;
    const command = body?.command;
    if (typeof command !== 'string') {
      const problem =
        command === undefined
          ? missingIssue(['body', 'command'])
          : issue('string_type', ['body', 'command'], 'Input should be a valid string', command);
      const notObject = 'Input should be a valid dictionary or object to extract fields from';
      return validationError([
        body === null ? issue('model_attributes_type', ['body'], notObject, request.body) : problem,
      ]);
    }
    const root = await deps.workspaces.ready(deps.sandboxId);
    const known = parseWorkspaceCommand(command);
    let result: BashResult;
    if (known?.kind === 'list-folder') result = listFolder(root, known.path);
    else if (known?.kind === 'resolve-path') result = resolvePath(root, known.path);
    else {
      const { output, exitCode } = simulateCommand(command);
      const text = output === '' ? null : `${output}\n`;
      // `bash: <cmd>: command not found` is what bash writes to stderr.
      result =
        exitCode === 127
          ? { exitCode, stdout: null, stderr: text }
          : { exitCode, stdout: text, stderr: null };
    }
    return json(200, {
      id: randomUUID(),
      timestamp: utcTimestamp(),
      command_id: randomUUID(),
      order: 0,
      exit_code: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
      kind: 'BashOutput',
    });
  }

  return {
    method: 'POST',
    pattern: /^\/api\/bash\/execute_bash_command$/,
    body: 'required',
    handle: execute,
  };
}
