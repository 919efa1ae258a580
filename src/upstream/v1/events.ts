/**
 * V1 (SDK) events -> the port's events (src/upstream/port/events.ts), once per event. Kinds map onto
 * the existing types: messages, terminal commands and their output, file reads/writes/edits, think,
 * finish, agent states from `ConversationStateUpdateEvent key:"execution_status"`, errors; anything
 * else (SystemPromptEvent, Condensation, UserRejectObservation, future kinds and tools) is OTHER with
 * the raw object. Null fields may be absent (SDK >= 1.37 omits them) or present; both read alike.
 *
 * `eventId` and `cause` are null (V1 ids are UUID strings with no order; it links by `action_id`,
 * kept in `raw`); `cursor` is minted from the event's id, timestamp and kind (event-cursor.ts).
 */

import { isJsonObject, type JsonObject, stringOrNull } from '../../contract/json.ts';
import type { ConversationEvent, EventCommon, EventKindFields, EventPhase } from '../port/events.ts';
import type { AgentStateValue } from '../port/vocabulary.ts';
import { upstreamTimestampToUtc } from '../timestamps.ts';
import { BEFORE_FIRST_CURSOR, v1Cursor } from './event-cursor.ts';

/** The text parts of a content list, joined. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  return content
    .filter(
      (part): part is JsonObject =>
        isJsonObject(part) && part.type === 'text' && typeof part.text === 'string',
    )
    .map((part) => part.text as string)
    .join('\n');
}

function imagesOf(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) =>
    isJsonObject(part) && part.type === 'image' && Array.isArray(part.image_urls)
      ? part.image_urls.filter((url): url is string => typeof url === 'string')
      : [],
  );
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
    source: stringOrNull(payload.source),
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
        ? { ...base, kind: 'USER_MESSAGE', content, imageUrls, fileUrls: [] }
        : { ...base, kind: 'AGENT_MESSAGE', content, imageUrls, waitForResponse: false };
    }
    case 'ActionEvent': {
      const action = isJsonObject(payload.action) ? payload.action : {};
      const actionKind = stringOrNull(action.kind) ?? 'unknown';
      const thought = textOf(payload.thought);
      return { ...common('ACTION', actionKind, thought), ...mapAction(actionKind, action, thought) };
    }
    case 'ObservationEvent': {
      const observation = isJsonObject(payload.observation) ? payload.observation : {};
      const observationKind = stringOrNull(observation.kind) ?? 'unknown';
      const text = textOf(observation.content);
      return {
        ...common('OBSERVATION', observationKind, text),
        ...mapObservation(observationKind, observation, text),
      };
    }
    case 'ConversationStateUpdateEvent': {
      if (payload.key === 'full_state') return null;
      if (payload.key !== 'execution_status') return { ...common('STATUS_UPDATE', kind), kind: 'OTHER' };
      const raw = typeof payload.value === 'string' ? payload.value : String(payload.value);
      return {
        ...common('OBSERVATION', kind),
        kind: 'AGENT_STATE_CHANGED',
        state: AGENT_STATE_OF_EXECUTION[raw] ?? null,
        stateRaw: raw,
        reason: '',
      };
    }
    case 'PauseEvent':
      return {
        ...common('ACTION', kind),
        kind: 'AGENT_STATE_CHANGE_REQUESTED',
        requestedState: 'paused',
        stateRaw: 'paused',
      };
    case 'AgentErrorEvent': {
      const classification = isJsonObject(payload.classification) ? payload.classification : {};
      return {
        ...common('ERROR', kind, stringOrNull(payload.error) ?? ''),
        kind: 'ERROR',
        errorId: stringOrNull(classification.error_id),
      };
    }
    case 'ConversationErrorEvent':
    case 'ServerErrorEvent':
      return {
        ...common('ERROR', kind, stringOrNull(payload.detail) ?? ''),
        kind: 'ERROR',
        errorId: stringOrNull(payload.code),
      };
    default:
      return { ...common('UNKNOWN', kind, stringOrNull(payload.rejection_reason) ?? ''), kind: 'OTHER' };
  }
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
    case 'FileEditorAction': {
      const path = stringOrNull(action.path);
      if (action.command === 'view') return { kind: 'FILE_READ', path, content: null };
      if (action.command === 'create')
        return { kind: 'FILE_WRITE', path, content: stringOrNull(action.file_text) };
      return {
        kind: 'FILE_EDIT',
        path,
        diff: null,
        command: stringOrNull(action.command),
        oldContent: stringOrNull(action.old_str),
        newContent: stringOrNull(action.new_str),
      };
    }
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
    case 'FileEditorObservation': {
      const path = stringOrNull(observation.path);
      if (observation.command === 'view') return { kind: 'FILE_READ', path, content: text };
      return {
        kind: 'FILE_EDIT',
        path,
        diff: null,
        command: stringOrNull(observation.command),
        oldContent: stringOrNull(observation.old_content),
        newContent: stringOrNull(observation.new_content),
      };
    }
    default:
      return { kind: 'OTHER' };
  }
}
