/**
 * The scripted agent's file steps on the V0 face: the change really made in the conversation's
 * workspace (the folder standing for the sandbox's `/workspace`), and the events an OpenHands 0.53
 * agent stores for it (`openhands/events/action/files.py`, `events/observation/files.py`, run by
 * `openhands/runtime/action_execution_server.py`):
 *
 *   write    a `write` action (FileWriteAction: the whole file, lines 0..-1) and a `write`
 *            observation; the runtime writes every line followed by a line break, so the file ends
 *            with one (and a text ending in one gets an empty last line)
 *   create   an `edit` action (FileEditAction, `command: "create"`, `impl_source: "oh_aci"`) and an
 *            `edit` observation with the editor's message and a unified diff
 *   replace  the same with `command: "str_replace"`; a failed replacement is an `edit` observation
 *            whose content is `ERROR:\n<the editor's message>`
 *   delete   the `run` of `rm <path>` and its output and exit code
 *
 * A write the runtime cannot make is an `error` observation. Paths in the events are absolute sandbox
 * paths (`/workspace/<path>`); nothing outside the workspace is touched.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import type {
  FileEditArgsRecord,
  FileEditExtrasRecord,
  FileWriteArgsRecord,
} from '../../contract/v0/workspace.ts';
import type { FileStep } from '../agent-script.ts';
import {
  editorCreate,
  editorStrReplace,
  removeFile,
  unifiedDiff,
  writeTextFile,
} from '../workspace/file-editor.ts';
import { confinedHostPath, pythonJoin } from '../workspace/sandbox-paths.ts';
import { decodeUtf8 } from '../workspace/text.ts';
import { agentEvent, runSteps, type V0Step } from './answer.ts';

/** The sandbox folder a V0 workspace stands for. */
export const V0_WORKSPACE_MOUNT = '/workspace';

/** An `error` observation answering the action stored just before it. */
function errorObservation(text: string): V0Step {
  return agentEvent('previous', {
    message: text,
    observation: 'error',
    content: text,
    extras: { error_id: '' },
  });
}

/**
 * FileWriteAction's run (`action_execution_server.py` `write`): every line followed by a line break,
 * parents made; answers the problem that stops it (an `error` observation's text), or null once written.
 */
export function runFileWrite(host: string | null, path: string, content: string): string | null {
  if (host === null) return `File not found: ${path}`;
  if (existsSync(host)) {
    if (statSync(host).isDirectory()) return `Path is a directory: ${path}. You can only write to files`;
    // The runtime reads the old file as UTF-8 before it rewrites it.
    if (decodeUtf8(readFileSync(host)) === null) return `File could not be decoded as utf-8: ${path}`;
  }
  writeTextFile(
    host,
    content
      .split('\n')
      .map((line) => `${line}\n`)
      .join(''),
  );
  return null;
}

/** An `edit` action of the file editor tool. */
function editAction(path: string, fields: Partial<FileEditArgsRecord>): V0Step {
  const args: FileEditArgsRecord = {
    path,
    command: '',
    file_text: null,
    old_str: null,
    new_str: null,
    insert_line: null,
    content: '',
    start: 1,
    end: -1,
    thought: '',
    impl_source: 'oh_aci',
    ...fields,
  };
  return agentEvent('message', { message: '', action: 'edit', args: { ...args } });
}

/** The `edit` observation: the editor's message (or `ERROR:\n...`) and the diff of the whole file. */
function editObservation(
  path: string,
  args: { old_str: string | null; new_str: string | null },
  content: string,
  diff: string,
): V0Step {
  const extras: FileEditExtrasRecord = {
    path,
    prev_exist: false,
    old_content: args.old_str,
    new_content: args.new_str,
    impl_source: 'oh_aci',
    diff,
    _diff_cache: null,
  };
  return agentEvent('previous', {
    message: `I edited the file ${path}.`,
    observation: 'edit',
    content,
    extras: { ...extras },
  });
}

/**
 * Makes `step`'s change in the workspace at `root` and answers its events, in order (the action
 * caused by the user's message, each observation by the action before it).
 */
export function v0FileSteps(step: FileStep, root: string): V0Step[] {
  const path = pythonJoin(V0_WORKSPACE_MOUNT, step.path);
  const host = confinedHostPath(root, V0_WORKSPACE_MOUNT, path);
  switch (step.kind) {
    case 'write': {
      const args: FileWriteArgsRecord = { path, content: step.content, start: 0, end: -1, thought: '' };
      const action = agentEvent('message', {
        message: `Writing file: ${path}`,
        action: 'write',
        args: { ...args },
      });
      const problem = runFileWrite(host, path, step.content);
      if (problem !== null) return [action, errorObservation(problem)];
      const done = `I wrote to the file ${path}.`;
      return [
        action,
        agentEvent('previous', { message: done, observation: 'write', content: '', extras: { path } }),
      ];
    }
    case 'create': {
      const outcome = editorCreate(host, path, step.fileText);
      const action = editAction(path, { command: 'create', file_text: step.fileText });
      const args = { old_str: null, new_str: null };
      return outcome.ok
        ? [action, editObservation(path, args, outcome.message, unifiedDiff('', outcome.newContent, path))]
        : [action, editObservation(path, args, `ERROR:\n${outcome.error}`, '')];
    }
    case 'replace': {
      const outcome = editorStrReplace(host, path, step.oldText, step.newText);
      const args = { old_str: step.oldText, new_str: step.newText };
      const action = editAction(path, { command: 'str_replace', ...args });
      return outcome.ok
        ? [
            action,
            editObservation(
              path,
              args,
              outcome.message,
              unifiedDiff(outcome.oldContent ?? '', outcome.newContent, path),
            ),
          ]
        : [action, editObservation(path, args, `ERROR:\n${outcome.error}`, '')];
    }
    case 'delete': {
      const { output, exitCode } = removeFile(host, step.path);
      return runSteps(`rm ${step.path}`, output, exitCode);
    }
  }
}
