/**
 * Wire shapes of a V0 conversation's workspace routes (OpenHands 0.53 `openhands/server/routes/files.py`
 * and `routes/conversation.py`, all under `/api/conversations/{conversation_id}`; docs/upstream-facts.md,
 * "V0: the workspace"), and the args and extras of the file actions and observations the agent stores
 * (`openhands/events/action/files.py`, `events/observation/files.py`). Paths in these answers are
 * sandbox paths: relative to `/workspace` (changes, listings) or absolute (`/workspace/...`).
 */

/** `GET .../git/changes`: a changed file. `R` is in the web client's type but never sent. */
export interface V0GitChangeRecord {
  status: 'M' | 'A' | 'D' | 'U';
  /** Relative to `/workspace`; a nested repository's files carry its folder name first. */
  path: string;
}

/** `GET .../git/diff?path=`: the file's two whole texts (not a patch). */
export interface V0GitDiffRecord {
  /** The file now, lines joined by `\n` (a final line break dropped). */
  modified: string;
  /** The file at the base ref, stripped; `""` when absent there. */
  original: string;
}

/** `GET .../select-file?file=`: the whole file as text. */
export interface SelectFileRecord {
  code: string;
}

/** The workspace routes' own error bodies (`{"error": ...}`, unlike the dependencies' `{"detail": ...}`). */
export interface WorkspaceErrorRecord {
  error: string;
}

/** `POST .../upload-files` (multipart, field `files` repeated): always 200 with both lists. */
export interface UploadFilesResponseRecord {
  /** `/workspace/<client file name>` per file written. */
  uploaded_files: string[];
  skipped_files: Array<{ name: string; reason: string }>;
}

/** `GET .../vscode-url`: null when VS Code is off or the runtime is not up. */
export interface VscodeUrlRecord {
  vscode_url: string | null;
}

/** `GET .../web-hosts`: the app ports' URLs, an object (URL -> port), not a list. */
export interface WebHostsRecord {
  hosts: Record<string, number>;
}

/** `args` of a `write` action (FileWriteAction): the whole file, lines 0..-1. */
export interface FileWriteArgsRecord {
  path: string;
  content: string;
  start: number;
  end: number;
  thought: string;
}

/** `args` of an `edit` action (FileEditAction) from the file editor tool (`impl_source: "oh_aci"`). */
export interface FileEditArgsRecord {
  path: string;
  command: 'create' | 'str_replace' | 'insert' | 'undo_edit' | '';
  file_text: string | null;
  old_str: string | null;
  new_str: string | null;
  insert_line: number | null;
  content: string;
  start: number;
  end: number;
  thought: string;
  impl_source: 'oh_aci' | 'llm_based_edit';
}

/** `extras` of an `edit` observation (FileEditObservation). */
export interface FileEditExtrasRecord {
  path: string;
  prev_exist: boolean;
  /** The action's `old_str` (not the file's old text). */
  old_content: string | null;
  /** The action's `new_str`. */
  new_content: string | null;
  impl_source: 'oh_aci' | 'llm_based_edit';
  /** A unified diff of the whole file with no context lines; `""` when the edit failed. */
  diff: string | null;
  /** A private cache field the dataclass serializes too. */
  _diff_cache: null;
}
