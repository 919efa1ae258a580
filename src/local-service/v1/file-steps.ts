/**
 * The scripted agent's tool calls on the V1 face whose observation is made when its turn comes: the
 * terminal (`run:`, and `delete:` as `rm <path>`) and the file editor (`write:` and `edit:` alone as
 * `create`, `edit:` with texts as `str_replace`), as agent server v1.43.1 emits them
 * (software-agent-sdk `openhands-tools/openhands/tools/file_editor/`, `terminal/`). A file step really
 * changes the sandbox's workspace, the folder standing for the project dir `/workspace/project`, and
 * only then is its observation built: an action held for confirmation and rejected changes nothing.
 * `create` refuses a file that exists, as the real editor does (edit it with `str_replace` instead);
 * a failed edit is a FileEditorObservation with `is_error: true` and the editor's message.
 */
import type { SdkEventRecord } from '../../contract/v1/events.ts';
import type { FileStep } from '../agent-script.ts';
import { type EditorOutcome, editorCreate, editorStrReplace, removeFile } from '../workspace/file-editor.ts';
import { confinedHostPath } from '../workspace/sandbox-paths.ts';
import { actionEvent, observationEvent, text } from './event-factory.ts';

/** The sandbox's project dir: the working directory the scripted sandbox reports, and its workspace. */
export const WORKING_DIR = '/workspace/project';

/** An event of an answer, or an observation made (with its tool's effect) only when its turn comes. */
export type AnswerPart = SdkEventRecord | { kind: 'deferred'; make: () => SdkEventRecord };

/** A terminal command: the TerminalAction now, its TerminalObservation (from `run`) when its turn comes. */
export function terminalEvents(
  command: string,
  run: () => { output: string; exitCode: number },
): AnswerPart[] {
  const action = actionEvent(
    'terminal',
    { command, is_input: false, reset: false, kind: 'TerminalAction' },
    { command },
  );
  const make = () => {
    const { output, exitCode } = run();
    return observationEvent(action, {
      content: [text(output)],
      is_error: false,
      command,
      exit_code: exitCode,
      timeout: false,
      metadata: {
        exit_code: exitCode,
        pid: -1,
        username: 'openhands',
        hostname: 'sandbox',
        working_dir: WORKING_DIR,
        prefix: '',
        suffix: '',
      },
      kind: 'TerminalObservation',
    });
  };
  return [action, { kind: 'deferred', make }];
}

/** A file editor call: the FileEditorAction now, its FileEditorObservation from `run` when its turn comes. */
function editorEvents(
  command: 'create' | 'str_replace',
  path: string,
  args: Record<string, string>,
  run: () => EditorOutcome,
): AnswerPart[] {
  const action = actionEvent(
    'file_editor',
    { command, path, ...args, kind: 'FileEditorAction' },
    { command, path, ...args },
  );
  const make = () => {
    const outcome = run();
    if (!outcome.ok) {
      return observationEvent(action, {
        content: [text(outcome.error)],
        is_error: true,
        command,
        prev_exist: false,
        kind: 'FileEditorObservation',
      });
    }
    return observationEvent(action, {
      content: [text(outcome.message)],
      is_error: false,
      command,
      path,
      prev_exist: command !== 'create',
      ...(outcome.oldContent === null ? {} : { old_content: outcome.oldContent }),
      new_content: outcome.newContent,
      kind: 'FileEditorObservation',
    });
  };
  return [action, { kind: 'deferred', make }];
}

/**
 * A file step as the SDK's events; `workspaceRoot` answers the sandbox's workspace folder when the
 * change is made. Paths are relative to the project dir or absolute.
 */
export function v1FileSteps(step: FileStep, workspaceRoot: () => string): AnswerPart[] {
  const path = step.path.startsWith('/') ? step.path : `${WORKING_DIR}/${step.path}`;
  const host = () => confinedHostPath(workspaceRoot(), WORKING_DIR, path);
  switch (step.kind) {
    case 'write':
      return editorEvents('create', path, { file_text: step.content }, () =>
        editorCreate(host(), path, step.content),
      );
    case 'create':
      return editorEvents('create', path, { file_text: step.fileText }, () =>
        editorCreate(host(), path, step.fileText),
      );
    case 'replace': {
      const args = { old_str: step.oldText, new_str: step.newText };
      return editorEvents('str_replace', path, args, () =>
        editorStrReplace(host(), path, step.oldText, step.newText),
      );
    }
    case 'delete':
      return terminalEvents(`rm ${step.path}`, () => removeFile(host(), step.path));
  }
}
