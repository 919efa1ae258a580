/**
 * V1 (SDK) events -> the port's events (src/upstream/port/events.ts), once per event. Kinds map onto
 * the existing types: messages, terminal commands and their output, file reads, think, finish, agent
 * states from `ConversationStateUpdateEvent key:"execution_status"`, errors, and the file changes of
 * every SDK tool that names the files it changes (FILE_WRITE / FILE_EDIT with `paths`: see
 * {@link mapFileChangeAction}); anything else (SystemPromptEvent, Condensation, UserRejectObservation,
 * future kinds and tools) is OTHER with the raw object. Null fields may be absent (SDK >= 1.37 omits
 * them) or present; both read alike.
 *
 * `eventId` and `cause` are null (V1 ids are UUID strings with no order; it links by `action_id`,
 * kept in `raw`); `cursor` is minted from the event's id, timestamp and kind (event-cursor.ts).
 */

import { isJsonObject, type JsonObject, stringOrNull } from '../../contract/json.ts';
import type { ConversationEvent, EventCommon, EventKindFields, EventPhase } from '../port/events.ts';
import { type AgentStateValue, KNOWN_EVENT_SOURCES, knownOrUnknown } from '../port/vocabulary.ts';
import { upstreamTimestampToUtc } from '../timestamps.ts';
import { BEFORE_FIRST_CURSOR, v1Cursor } from './event-cursor.ts';

/*
 * textOf and imagesOf run for every message, thought and observation: loops, not filter/map/flatMap
 * chains, which allocate a callback and an array per step.
 */

/** The text parts of a content list, joined by newlines. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  let text: string | null = null;
  for (const part of content) {
    if (isJsonObject(part) && part.type === 'text' && typeof part.text === 'string') {
      text = text === null ? part.text : `${text}\n${part.text}`;
    }
  }
  return text ?? '';
}

/** The image URLs of a content list, in order. */
function imagesOf(content: unknown): string[] {
  const urls: string[] = [];
  if (!Array.isArray(content)) return urls;
  for (const part of content) {
    if (!isJsonObject(part) || part.type !== 'image' || !Array.isArray(part.image_urls)) continue;
    for (const url of part.image_urls) if (typeof url === 'string') urls.push(url);
  }
  return urls;
}

/** V1 execution status -> the V0 agent state a client already knows. */
const AGENT_STATE_OF_EXECUTION: Readonly<Record<string, AgentStateValue>> = {
  idle: 'awaiting_user_input',
  running: 'running',
  paused: 'paused',
  waiting_for_confirmation: 'awaiting_user_confirmation',
  finished: 'finished',
  error: 'error',
  stuck: 'error',
  deleting: 'stopped',
};

/** The place of a stored event (for its cursor); null when it has no string id. */
export function placeOf(payload: unknown): { id: string; timestamp: string; kind: string } | null {
  if (!isJsonObject(payload) || typeof payload.id !== 'string' || payload.id === '') return null;
  return {
    id: payload.id,
    timestamp: stringOrNull(payload.timestamp) ?? '',
    kind: stringOrNull(payload.kind) ?? '',
  };
}

/**
 * Maps one SDK event; null for a payload that is not an object or the never-stored `full_state`. An
 * event without an id takes the cursor `fallbackCursor` (the stored event it follows).
 */
export function mapV1Event(
  payload: unknown,
  timeZone: string,
  fallbackCursor: string = BEFORE_FIRST_CURSOR,
): ConversationEvent | null {
  if (!isJsonObject(payload)) return null;
  const kind = stringOrNull(payload.kind) ?? 'unknown';
  const place = placeOf(payload);
  const cursor = place === null ? fallbackCursor : v1Cursor(place);
  const common = (phase: EventPhase, upstreamKind: string, message = ''): EventCommon => ({
    eventId: null,
    cursor,
    timestamp: upstreamTimestampToUtc(payload.timestamp, timeZone),
    source: knownOrUnknown(KNOWN_EVENT_SOURCES, stringOrNull(payload.source)),
    message,
    cause: null,
    phase,
    upstreamKind,
    raw: Object.freeze(payload),
  });
  switch (kind) {
    case 'MessageEvent': {
      const message = isJsonObject(payload.llm_message) ? payload.llm_message : {};
      const content = textOf(message.content);
      const imageUrls = imagesOf(message.content);
      const base = common('ACTION', kind, content);
      return payload.source === 'user'
        ? withKind(base, { kind: 'USER_MESSAGE', content, imageUrls, fileUrls: [] })
        : withKind(base, { kind: 'AGENT_MESSAGE', content, imageUrls, waitForResponse: false });
    }
    case 'ActionEvent': {
      const action = isJsonObject(payload.action) ? payload.action : {};
      const actionKind = stringOrNull(action.kind) ?? 'unknown';
      const thought = textOf(payload.thought);
      return withKind(common('ACTION', actionKind, thought), mapAction(actionKind, action, thought));
    }
    case 'ObservationEvent': {
      const observation = isJsonObject(payload.observation) ? payload.observation : {};
      const observationKind = stringOrNull(observation.kind) ?? 'unknown';
      const text = textOf(observation.content);
      return withKind(
        common('OBSERVATION', observationKind, text),
        mapObservation(observationKind, observation, text),
      );
    }
    case 'ConversationStateUpdateEvent': {
      if (payload.key === 'full_state') return null;
      if (payload.key !== 'execution_status')
        return withKind(common('STATUS_UPDATE', kind), { kind: 'OTHER' });
      const raw = typeof payload.value === 'string' ? payload.value : String(payload.value);
      return withKind(common('OBSERVATION', kind), {
        kind: 'AGENT_STATE_CHANGED',
        state: AGENT_STATE_OF_EXECUTION[raw] ?? null,
        stateRaw: raw,
        reason: '',
      });
    }
    case 'PauseEvent':
      return withKind(common('ACTION', kind), {
        kind: 'AGENT_STATE_CHANGE_REQUESTED',
        requestedState: 'paused',
        stateRaw: 'paused',
      });
    case 'AgentErrorEvent': {
      const classification = isJsonObject(payload.classification) ? payload.classification : {};
      return withKind(common('ERROR', kind, stringOrNull(payload.error) ?? ''), {
        kind: 'ERROR',
        errorId: stringOrNull(classification.error_id),
      });
    }
    case 'ConversationErrorEvent':
    case 'ServerErrorEvent':
      return withKind(common('ERROR', kind, stringOrNull(payload.detail) ?? ''), {
        kind: 'ERROR',
        errorId: stringOrNull(payload.code),
      });
    case 'ACPToolCallEvent': {
      const fields = mapAcpFileChange(payload);
      // Any other ACP tool call (a read, a search, a command, an edit sent without its diff) is OTHER.
      if (fields === null) break;
      // Sent when the call starts (the action half) and again when it ends (the observation half).
      const ended = payload.status === 'completed' || payload.status === 'failed';
      const title = stringOrNull(payload.title) ?? '';
      return withKind(common(ended ? 'OBSERVATION' : 'ACTION', kind, title), fields);
    }
  }
  return withKind(common('UNKNOWN', kind, stringOrNull(payload.rejection_reason) ?? ''), { kind: 'OTHER' });
}

/**
 * The mapped event: `common` (fresh, owned by the caller) with the kind's fields added after its own, in
 * their order, as `{...common, ...fields}` would give. Not a spread: on this path (50 events a history
 * page) spreading into a literal cost ~3.5 µs per event in V8 against ~0.06 µs for Object.assign.
 */
function withKind(common: EventCommon, fields: EventKindFields): ConversationEvent {
  return Object.assign(common, fields);
}

function mapAction(actionKind: string, action: JsonObject, thought: string): EventKindFields {
  switch (actionKind) {
    case 'TerminalAction':
    case 'ExecuteBashAction':
      return {
        kind: 'COMMAND',
        command: stringOrNull(action.command) ?? '',
        thought: thought === '' ? null : thought,
        isInput: action.is_input === true,
      };
    case 'FileEditorAction':
    case 'PlanningFileEditorAction':
    case 'WriteFileAction':
    case 'EditAction':
    case 'ApplyPatchAction':
      return mapFileChangeAction(actionKind, action);
    case 'ThinkAction':
      return { kind: 'THINK', thought: stringOrNull(action.thought) ?? '' };
    case 'FinishAction':
      return { kind: 'FINISH', finalThought: stringOrNull(action.message) ?? '', outputs: {} };
    case 'BrowserNavigateAction':
      return { kind: 'BROWSE', url: stringOrNull(action.url), content: null };
    default:
      return { kind: 'OTHER' };
  }
}

function mapObservation(observationKind: string, observation: JsonObject, text: string): EventKindFields {
  switch (observationKind) {
    case 'TerminalObservation':
    case 'ExecuteBashObservation': {
      const metadata = isJsonObject(observation.metadata) ? observation.metadata : {};
      const exit = [observation.exit_code, metadata.exit_code].find(Number.isInteger) as number | undefined;
      return {
        kind: 'COMMAND_OUTPUT',
        command: stringOrNull(observation.command),
        output: text,
        exitCode: exit ?? null,
        // -1 is "still running after the soft timeout": neither success nor failure yet.
        success: exit === undefined || exit === -1 ? null : exit === 0 && observation.is_error !== true,
      };
    }
    case 'FileEditorObservation':
    case 'PlanningFileEditorObservation':
    case 'WriteFileObservation':
    case 'EditObservation':
    case 'ApplyPatchObservation':
      return mapFileChangeObservation(observationKind, observation, text);
    default:
      return { kind: 'OTHER' };
  }
}

/*
 * File changes. Every SDK tool that changes files by name, at OpenHands/software-agent-sdk v1.43.1
 * (wire shapes in src/contract/v1/events.ts):
 *   openhands-tools/openhands/tools/file_editor/definition.py             FileEditorAction / Observation
 *   openhands-tools/openhands/tools/planning_file_editor/definition.py    PlanningFileEditorAction / Observation
 *   openhands-tools/openhands/tools/gemini/write_file/definition.py       WriteFileAction / Observation
 *   openhands-tools/openhands/tools/gemini/edit/definition.py             EditAction / EditObservation
 *   openhands-tools/openhands/tools/apply_patch/definition.py, core.py    ApplyPatchAction / Observation
 *   openhands-sdk/openhands/sdk/event/acp_tool_call.py                    ACPToolCallEvent with diff blocks
 * A whole file written from an action's text is FILE_WRITE (as V0's `write`); everything else is
 * FILE_EDIT, observations included (they carry the text before and after). The terminal tool changes
 * files too, but names none: it stays COMMAND.
 */

/** Each non-empty path once, in order. */
function pathList(candidates: readonly unknown[]): string[] {
  return [...new Set(candidates.filter((path): path is string => typeof path === 'string' && path !== ''))];
}

/**
 * FILE_EDIT of the files `named`: `path` is the one file when there is one, and `paths` lists them
 * unless the tool reported an error (`changed` false: nothing was changed).
 */
function fileEdit(
  named: string[],
  changed: boolean,
  fields: { command?: string | null; oldContent?: string | null; newContent?: string | null },
): EventKindFields {
  return {
    kind: 'FILE_EDIT',
    path: named.length === 1 ? (named[0] ?? null) : null,
    diff: null,
    command: fields.command ?? null,
    oldContent: fields.oldContent ?? null,
    newContent: fields.newContent ?? null,
    paths: changed ? named : [],
  };
}

/** The starts of the lines that name a file in an apply_patch text (core.py `Parser.parse`). */
const PATCH_FILE_PREFIXES = ['*** Add File: ', '*** Delete File: ', '*** Update File: ', '*** Move to: '];

/**
 * The files a patch names, in its order: the added, deleted and updated ones and a renamed one's new
 * name. Read line by line as the SDK's parser does (`line[len(prefix):]`, nothing trimmed).
 */
function patchPaths(patch: string): string[] {
  return pathList(
    patch.split('\n').map((line) => {
      const prefix = PATCH_FILE_PREFIXES.find((start) => line.startsWith(start));
      return prefix === undefined ? undefined : line.slice(prefix.length);
    }),
  );
}

/** A file-changing action (it asks to change its files); `FileEditorAction` `view` is a read. */
function mapFileChangeAction(actionKind: string, action: JsonObject): EventKindFields {
  switch (actionKind) {
    case 'WriteFileAction': {
      const path = stringOrNull(action.file_path);
      return { kind: 'FILE_WRITE', path, content: stringOrNull(action.content), paths: pathList([path]) };
    }
    case 'EditAction':
      return fileEdit(pathList([action.file_path]), true, {
        oldContent: stringOrNull(action.old_string),
        newContent: stringOrNull(action.new_string),
      });
    case 'ApplyPatchAction':
      return fileEdit(patchPaths(stringOrNull(action.patch) ?? ''), true, {});
    default: {
      // FileEditorAction and PlanningFileEditorAction, its subclass with the same fields.
      const path = stringOrNull(action.path);
      if (action.command === 'view') return { kind: 'FILE_READ', path, content: null };
      if (action.command === 'create')
        return { kind: 'FILE_WRITE', path, content: stringOrNull(action.file_text), paths: pathList([path]) };
      return fileEdit(pathList([path]), true, {
        command: stringOrNull(action.command),
        oldContent: stringOrNull(action.old_str),
        newContent: stringOrNull(action.new_str),
      });
    }
  }
}

/**
 * A file-changing tool's observation. `paths` lists what it changed: none when it reports an error
 * (an `edit` that found no match keeps its `file_path` and changed nothing).
 */
function mapFileChangeObservation(
  observationKind: string,
  observation: JsonObject,
  text: string,
): EventKindFields {
  const changed = observation.is_error !== true;
  switch (observationKind) {
    case 'WriteFileObservation':
    case 'EditObservation':
      return fileEdit(pathList([observation.file_path]), changed, {
        oldContent: stringOrNull(observation.old_content),
        newContent: stringOrNull(observation.new_content),
      });
    case 'ApplyPatchObservation': {
      const commit = isJsonObject(observation.commit) ? observation.commit : {};
      const changes = Object.entries(isJsonObject(commit.changes) ? commit.changes : {});
      const named = pathList(
        changes.flatMap(([path, change]) => [path, isJsonObject(change) ? change.move_path : undefined]),
      );
      // A patch of one file: its text before and after, as the other tools report them.
      const only = changes.length === 1 && isJsonObject(changes[0]?.[1]) ? changes[0][1] : {};
      return fileEdit(named, changed, {
        oldContent: stringOrNull(only.old_content),
        newContent: stringOrNull(only.new_content),
      });
    }
    default: {
      // FileEditorObservation and PlanningFileEditorObservation (which carries no contents).
      const path = stringOrNull(observation.path);
      if (observation.command === 'view') return { kind: 'FILE_READ', path, content: text };
      return fileEdit(pathList([path]), changed, {
        command: stringOrNull(observation.command),
        oldContent: stringOrNull(observation.old_content),
        newContent: stringOrNull(observation.new_content),
      });
    }
  }
}

/**
 * An ACP tool call that changes files, recognised as the SDK does (`ACPToolCallEvent.is_patch_edit`
 * looks for `diff` content blocks): FILE_EDIT of each diff's path, null for any other call. The blocks
 * come in the SDK's snake_case or in ACP's camelCase (acp_tool_call.py `_block_field` reads both). A
 * failed call changed nothing.
 */
function mapAcpFileChange(payload: JsonObject): EventKindFields | null {
  const diffs = Array.isArray(payload.content)
    ? payload.content.filter((block): block is JsonObject => isJsonObject(block) && block.type === 'diff')
    : [];
  if (diffs.length === 0) return null;
  const only = diffs.length === 1 && diffs[0] !== undefined ? diffs[0] : {};
  return fileEdit(
    pathList(diffs.map((diff) => diff.path)),
    payload.status !== 'failed' && payload.is_error !== true,
    {
      oldContent: stringOrNull(only.old_text ?? only.oldText),
      newContent: stringOrNull(only.new_text ?? only.newText),
    },
  );
}
