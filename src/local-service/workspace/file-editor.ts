/**
 * The file edits the scripted agent really makes in a workspace, with the texts the real tools answer:
 * the file editor's `create` and `str_replace` (the same editor in both APIs: openhands-aci 0.3.1
 * under OpenHands 0.53, its port in software-agent-sdk v1.43.1
 * `openhands-tools/openhands/tools/file_editor/editor.py`), and `rm` in the terminal. Synchronous (small
 * files, one agent step), so an agent step stays one turn. A path the workspace does not hold (`host`
 * null: outside it) is refused with an error of the tool's shape, never written.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { decodeUtf8 } from './text.ts';

/** What an editor command did: its message, and the file before and after; or the tool's error text. */
export type EditorOutcome =
  | { ok: true; message: string; oldContent: string | null; newContent: string }
  | { ok: false; error: string };

/** Lines of context the editor shows around a replacement. */
const SNIPPET_CONTEXT_WINDOW = 4;

const invalidPath = (path: string, hint: string) => `Invalid \`path\` parameter: ${path}. ${hint}`;
const OUTSIDE = 'The path is outside the workspace of the local service.';

/** The editor's `validate_path` for a command other than `view`; null when the path is fine. */
function pathProblem(host: string | null, path: string, command: 'create' | 'str_replace'): string | null {
  if (host === null) return invalidPath(path, OUTSIDE);
  const exists = existsSync(host);
  if (command === 'create' && exists) {
    return invalidPath(
      path,
      `File already exists at: ${path}. Cannot overwrite files using command \`create\`.`,
    );
  }
  if (command !== 'create' && !exists) {
    return invalidPath(path, `The path ${path} does not exist. Please provide a valid path.`);
  }
  if (exists && statSync(host).isDirectory()) {
    return invalidPath(
      path,
      `The path ${path} is a directory and only the \`view\` command can be used on directories.`,
    );
  }
  return null;
}

/** Writes `text` as UTF-8, making missing parent folders. */
export function writeTextFile(host: string, text: string): void {
  mkdirSync(dirname(host), { recursive: true });
  writeFileSync(host, text, 'utf8');
}

/** `create`: a new file with `fileText`; an existing path is an error. */
export function editorCreate(host: string | null, path: string, fileText: string): EditorOutcome {
  const problem = pathProblem(host, path, 'create');
  if (problem !== null || host === null) return { ok: false, error: problem ?? OUTSIDE };
  writeTextFile(host, fileText);
  return {
    ok: true,
    message: `File created successfully at: ${path}`,
    oldContent: null,
    newContent: fileText,
  };
}

/** Python's `f"{n:6}"`. */
const pad6 = (n: number) => String(n).padStart(6, ' ');

/** The editor's `_make_output`: the snippet numbered like `cat -n`, from `startLine`. */
function catN(snippet: string, description: string, startLine: number): string {
  const numbered = snippet
    .split('\n')
    .map((line, i) => `${pad6(i + startLine)}\t${line}`)
    .join('\n');
  return `Here's the result of running \`cat -n\` on ${description}:\n${numbered}\n`;
}

/** Every match of `needle` in `text` (non-overlapping, left to right) with its 1-based line. */
function occurrences(text: string, needle: string): Array<{ index: number; line: number }> {
  const found: Array<{ index: number; line: number }> = [];
  if (needle === '') return found;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    found.push({ index: at, line: text.slice(0, at).split('\n').length });
  }
  return found;
}

/**
 * `str_replace`: exactly one occurrence of `oldStr` (retried with it stripped of surrounding space)
 * becomes `newStr`; none or several leave the file as it was, with the editor's error.
 */
export function editorStrReplace(
  host: string | null,
  path: string,
  oldStr: string,
  newStr: string,
): EditorOutcome {
  if (newStr === oldStr) {
    return {
      ok: false,
      error: `Invalid \`new_str\` parameter: ${newStr}. No replacement was performed. \`new_str\` and \`old_str\` must be different.`,
    };
  }
  const problem = pathProblem(host, path, 'str_replace');
  if (problem !== null || host === null) return { ok: false, error: problem ?? OUTSIDE };
  const content = decodeUtf8(readFileSync(host));
  if (content === null) {
    return { ok: false, error: `File validation failed for ${path}: the file is not UTF-8 text` };
  }
  let needle = oldStr;
  let found = occurrences(content, needle);
  if (found.length === 0) {
    needle = oldStr.trim();
    found = occurrences(content, needle);
    if (found.length === 0) {
      return {
        ok: false,
        error: `No replacement was performed, old_str \`${needle}\` did not appear verbatim in ${path}.`,
      };
    }
  }
  const first = found[0];
  if (found.length > 1 || first === undefined) {
    const lines = [...new Set(found.map((f) => f.line))].sort((a, b) => a - b).join(', ');
    return {
      ok: false,
      error: `No replacement was performed. Multiple occurrences of old_str \`${needle}\` in lines [${lines}]. Please ensure it is unique.`,
    };
  }
  const newContent = content.slice(0, first.index) + newStr + content.slice(first.index + needle.length);
  writeTextFile(host, newContent);
  const startLine = Math.max(0, first.line - SNIPPET_CONTEXT_WINDOW);
  const endLine = first.line + SNIPPET_CONTEXT_WINDOW + (newStr.match(/\n/g)?.length ?? 0);
  const snippet = newContent
    .split(/(?<=\n)/)
    .slice(startLine, endLine)
    .join('');
  const message =
    `The file ${path} has been edited. ${catN(snippet, `a snippet of ${path}`, startLine + 1)}` +
    'Review the changes and make sure they are as expected. Edit the file again if necessary.';
  return { ok: true, message, oldContent: content, newContent };
}

/** `rm <path>` in the sandbox's terminal: its output and exit code. */
export function removeFile(host: string | null, path: string): { output: string; exitCode: number } {
  const refused = (why: string) => ({ output: `rm: cannot remove '${path}': ${why}`, exitCode: 1 });
  if (host === null) return refused('Permission denied');
  if (!existsSync(host)) return refused('No such file or directory');
  if (statSync(host).isDirectory()) return refused('Is a directory');
  rmSync(host);
  return { output: '', exitCode: 0 };
}

/**
 * openhands-aci's `get_diff(old, new, path)`: a unified diff with no context lines (`n=0`), lines
 * stripped at the end, as V0's edit observations carry it. The change is one hunk, from the first to
 * the last differing line (difflib may split a hunk where lines inside it match).
 */
export function unifiedDiff(oldText: string, newText: string, path: string): string {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  ) {
    suffix++;
  }
  const removed = a.slice(prefix, a.length - suffix);
  const added = b.slice(prefix, b.length - suffix);
  if (removed.length === 0 && added.length === 0) return '';
  // difflib's _format_range_unified: `start` alone for one line, `start,length` otherwise.
  const range = (start: number, length: number) =>
    length === 1 ? `${start + 1}` : `${length === 0 ? start : start + 1},${length}`;
  return [
    `--- ${path}`,
    `+++ ${path}`,
    `@@ -${range(prefix, removed.length)} +${range(prefix, added.length)} @@`,
    ...removed.map((line) => `-${line}`),
    ...added.map((line) => `+${line}`),
  ]
    .map((line) => line.trimEnd())
    .join('\n');
}
