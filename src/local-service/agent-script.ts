/**
 * The scripted agent both faces answer with, as a pure function: what it does in answer to one user
 * message, as neutral steps in order (run a command, think, set the title, say something, report an
 * error, finish) plus whether it finished. Each face turns the steps into its own events
 * (v0/answer.ts: OpenHands 0.53 actions and observations; v1/answer.ts: SDK events) and runs them
 * (v0/agent.ts, v1/agent.ts). No timers, store, I/O or wire shapes here.
 *
 * The little command language of the agent (a user message's content, leading/trailing space ignored):
 *
 *   run: <cmd>      run a command: `echo <text>` prints <text> (exit 0); `exit <n>` prints nothing and
 *                   exits with <n>; `true` exits 0 and `false` exits 1; anything else prints
 *                   `bash: <cmd>: command not found` and exits 127.
 *   think: <text>   log a thought.
 *   title: <text>   the conversation's title becomes <text> (at most MAX_TITLE_LENGTH characters), and
 *                   the agent says so.
 *   error: <text>   report an error whose text is <text>.
 *   finish          finish (the thought is the text after `finish:`, if any); the agent is done.
 *   write: <path>   the lines after the first make the file's new content (created or replaced).
 *   edit: <path>    with lines after it: `<old>`, a line `---`, `<new>`: the one occurrence of <old>
 *                   becomes <new> (no `---` line: <old> is removed); alone: creates the file with a
 *                   one-line comment.
 *   delete: <path>  removes the file (the terminal's `rm <path>`).
 *   anything else   the agent quotes it: `You said: <content>`.
 *
 * File paths are as typed: relative to the workspace (each face's own root) or absolute sandbox
 * paths; the faces make the change in the workspace and emit their tools' events.
 * A face may add verbs of its own before asking the script (V1's `fail:`).
 */
import { MAX_TITLE_LENGTH } from './validation/title.ts';

/** One step of an answer, in order. */
export type ScriptStep =
  /** The agent says `content`. */
  | { kind: 'message'; content: string }
  /** A command and what it printed and exited with. */
  | { kind: 'run'; command: string; output: string; exitCode: number }
  | { kind: 'think'; thought: string }
  /** The conversation's title changes. */
  | { kind: 'title'; title: string }
  /** The agent reports an error. */
  | { kind: 'error'; content: string }
  /** The agent finishes, with a final thought (empty when none was given). */
  | { kind: 'finish'; thought: string }
  /** The file at `path` gets `content` as its whole text (created when missing). */
  | { kind: 'write'; path: string; content: string }
  /** A new file at `path` with `fileText` (the file editor's `create`). */
  | { kind: 'create'; path: string; fileText: string }
  /** The one occurrence of `oldText` in the file becomes `newText` (the file editor's `str_replace`). */
  | { kind: 'replace'; path: string; oldText: string; newText: string }
  /** The file at `path` is removed (`rm <path>` in the terminal). */
  | { kind: 'delete'; path: string };

/** The steps that change a file of the workspace. */
export type FileStep = Extract<ScriptStep, { kind: 'write' | 'create' | 'replace' | 'delete' }>;

/** The agent's whole answer to one message. */
export interface AgentAnswer {
  steps: ScriptStep[];
  /** True when the agent is done (`finish`); else it waits for the next message. */
  finished: boolean;
}

/** Deterministic output of `run: <cmd>`. */
export function simulateCommand(command: string): { output: string; exitCode: number } {
  const echo = /^echo(?:\s+(.*))?$/s.exec(command);
  if (echo) return { output: echo[1] ?? '', exitCode: 0 };
  const exit = /^exit\s+(\d{1,3})$/.exec(command);
  if (exit) return { output: '', exitCode: Number(exit[1]) % 256 };
  if (command === 'true') return { output: '', exitCode: 0 };
  if (command === 'false') return { output: '', exitCode: 1 };
  const name = command.split(/\s+/)[0] ?? command;
  return { output: `bash: ${name}: command not found`, exitCode: 127 };
}

/** The one-line file `edit: <path>` alone creates. */
export const CREATED_FILE_TEXT = '# created by the scripted agent\n';

/** `write:`, `edit:` and `delete:`: the path on the first line, the rest verbatim; null for anything else. */
function fileCommand(content: string): ScriptStep | null {
  const found = /^\s*(write|edit|delete):[ \t]*([^\r\n]*?)[ \t]*(?:\r?\n([\s\S]*))?$/i.exec(content);
  const verb = found?.[1]?.toLowerCase();
  const path = found?.[2] ?? '';
  if (!found || path === '') return null;
  const body = found[3];
  if (verb === 'write') return { kind: 'write', path, content: body ?? '' };
  if (verb === 'delete') return { kind: 'delete', path };
  if (body === undefined) return { kind: 'create', path, fileText: CREATED_FILE_TEXT };
  const lines = body.split('\n');
  const separator = lines.findIndex((line) => line.replace(/\r$/, '') === '---');
  if (separator === -1) return { kind: 'replace', path, oldText: body, newText: '' };
  return {
    kind: 'replace',
    path,
    oldText: lines.slice(0, separator).join('\n'),
    newText: lines.slice(separator + 1).join('\n'),
  };
}

/** What the agent answers to a user message with this content (the command language above). */
export function agentScript(content: string): AgentAnswer {
  const file = fileCommand(content);
  if (file !== null) return { steps: [file], finished: false };
  const text = content.trim();
  const command = /^(run|think|title|error|finish)(?::\s*(.*))?$/is.exec(text);
  const verb = command?.[1]?.toLowerCase();
  const rest = command?.[2]?.trim() ?? '';
  const answered = (...steps: ScriptStep[]): AgentAnswer => ({ steps, finished: false });
  if (verb === 'run' && rest !== '')
    return answered({ kind: 'run', command: rest, ...simulateCommand(rest) });
  if (verb === 'think' && rest !== '') return answered({ kind: 'think', thought: rest });
  if (verb === 'title' && rest !== '') {
    const title = rest.slice(0, MAX_TITLE_LENGTH);
    return answered({ kind: 'title', title }, { kind: 'message', content: `Title changed to: ${title}` });
  }
  if (verb === 'error' && rest !== '') return answered({ kind: 'error', content: rest });
  if (verb === 'finish') return { steps: [{ kind: 'finish', thought: rest }], finished: true };
  return answered({ kind: 'message', content: `You said: ${content}` });
}
