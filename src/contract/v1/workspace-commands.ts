/**
 * The two shell commands the gateway runs through a V1 agent server's
 * `POST /api/bash/execute_bash_command` (`{"command", "cwd"?, "timeout"?}` -> the last `BashOutput`:
 * `exit_code`, `stdout`, `stderr`; software-agent-sdk `openhands-agent-server/.../bash_router.py`), for
 * what the agent server has no route for: one folder's entries (its `search_subdirs` lists folders
 * only) and where a path really leads (its file routes follow symlinks anywhere in the sandbox).
 *
 * Both take absolute paths the gateway has already confined to the project directory, and quote them
 * for the shell here, once. The bundled service answers exactly these two forms (matching
 * {@link parseWorkspaceCommand}) from its workspace folders.
 */

/** A path in single quotes for `bash`: every `'` closes the quote, adds `\'` and reopens it. */
export function shellQuote(path: string): string {
  return `'${path.replaceAll("'", "'\\''")}'`;
}

/**
 * Lists one folder: a line per entry, `<type>\t<size>\t<name>`, type `f` file, `d` folder, `l` link
 * (find's `%y`), `.git` left out. Exit code 1 with nothing on stdout: no such folder.
 */
export function listFolderCommand(absoluteDir: string): string {
  return `find ${shellQuote(absoluteDir)} -mindepth 1 -maxdepth 1 ! -name .git -printf '%y\\t%s\\t%f\\n'`;
}

/** Prints where `absolutePath` leads once every symlink is followed; exit code 1 when it leads nowhere. */
export function resolvePathCommand(absolutePath: string): string {
  return `realpath -e -- ${shellQuote(absolutePath)}`;
}

/** The body of `POST /api/bash/execute_bash_command`. */
export interface ExecuteBashRequestRecord {
  command: string;
  cwd?: string | null;
  /** Seconds. @default 300 upstream */
  timeout?: number;
}

/** The answer of `POST /api/bash/execute_bash_command` (the command's last `BashOutput`). */
export interface BashOutputRecord {
  exit_code: number | null;
  stdout: string | null;
  stderr: string | null;
}

/** Which of the two commands `command` is, with its path unquoted; null for anything else. */
export function parseWorkspaceCommand(
  command: string,
): { kind: 'list-folder' | 'resolve-path'; path: string } | null {
  const quoted = "'((?:[^']|'\\\\'')*)'";
  const list = new RegExp(
    `^find ${quoted} -mindepth 1 -maxdepth 1 ! -name \\.git -printf '%y\\\\t%s\\\\t%f\\\\n'$`,
  ).exec(command);
  if (list?.[1] !== undefined) return { kind: 'list-folder', path: list[1].replaceAll("'\\''", "'") };
  const resolve = new RegExp(`^realpath -e -- ${quoted}$`).exec(command);
  if (resolve?.[1] !== undefined) return { kind: 'resolve-path', path: resolve[1].replaceAll("'\\''", "'") };
  return null;
}
