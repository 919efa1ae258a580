/**
 * What a conversation event is on the gateway's side, whichever API sent it: the common fields and the
 * kind-specific ones the schema's event types resolve (src/schema/events.ts). An adapter maps each of
 * its wire events into one of these exactly once (V0: src/upstream/v0/events.ts); unknown or future
 * kinds become `OTHER` with the upstream name and the raw event kept, never an error.
 *
 * Every event carries `cursor`, the opaque token a client resumes from on either API. V0 also has
 * `eventId`, the upstream's integer id (its live bridge orders, deduplicates and resumes by it), and
 * `cause`, its integer cause; both are null on V1, whose event ids are strings with no numeric order.
 */
import type { UtcDateTime } from '../timestamps.ts';
import type { AgentStateValue } from './vocabulary.ts';

/** Which of the four upstream shapes an event had (`UNKNOWN` for none of them: a future shape). */
export type EventPhase = 'ACTION' | 'OBSERVATION' | 'STATUS_UPDATE' | 'ERROR' | 'UNKNOWN';

/** Fields every mapped event has. */
export interface EventCommon {
  /**
   * V0's per-conversation integer id; null for status updates, errors and the session-closing state
   * change, and always null on V1 (its ids are strings: see `cursor`).
   */
  eventId: number | null;
  /**
   * The opaque token to resume after this event (./event-cursor.ts), minted by the adapter: a stored
   * event's own position; an id-less one carries the position of the stored event it follows.
   */
  cursor: string;
  /** ISO 8601 UTC with `Z` (microseconds kept), read in the configured upstream time zone. */
  timestamp: UtcDateTime | null;
  /**
   * `agent`, `user`, `environment`, UNKNOWN_VALUE for another string (the upstream's is in `raw`), or
   * null when the upstream sent none; read here so the schema reads a property, not a resolver per event.
   */
  source: string | null;
  message: string;
  cause: number | null;
  phase: EventPhase;
  /** The upstream's action / observation name, or `status_update` / `error`. */
  upstreamKind: string;
  /** The upstream event as received. Upstream events carry no caller credential. */
  raw: Readonly<Record<string, unknown>>;
}

/**
 * The kind-specific fields of a mapped event, discriminated by `kind`.
 *
 * `FILE_WRITE` and `FILE_EDIT` are the two kinds of a file change (a whole file written; a file
 * edited, created from an edit, or patched), and both carry `paths`: the files the event changes, as
 * the upstream named them (absolute, or relative to the workspace as a patch names them), each once,
 * in the upstream's order. An action lists the files it asks to change; an observation the files the
 * tool reports changed, so none when the tool reports an error. No other kind names a changed file,
 * though some change files unnamed: a shell command (`COMMAND`), or a tool this gateway does not know.
 */
export type EventKindFields =
  | { kind: 'USER_MESSAGE'; content: string; imageUrls: string[]; fileUrls: string[] }
  | { kind: 'AGENT_MESSAGE'; content: string; imageUrls: string[]; waitForResponse: boolean }
  | { kind: 'COMMAND'; command: string; thought: string | null; isInput: boolean }
  | {
      kind: 'COMMAND_OUTPUT';
      command: string | null;
      output: string;
      exitCode: number | null;
      success: boolean | null;
    }
  | { kind: 'FILE_READ'; path: string | null; content: string | null }
  | { kind: 'FILE_WRITE'; path: string | null; content: string | null; paths: string[] }
  | {
      kind: 'FILE_EDIT';
      /** The file, when the event names exactly one (a patch may name several: see `paths`). */
      path: string | null;
      diff: string | null;
      command: string | null;
      oldContent: string | null;
      newContent: string | null;
      paths: string[];
    }
  | { kind: 'BROWSE'; url: string | null; content: string | null }
  | { kind: 'THINK'; thought: string }
  | { kind: 'FINISH'; finalThought: string; outputs: Record<string, unknown> }
  | { kind: 'AGENT_STATE_CHANGED'; state: AgentStateValue | null; stateRaw: string; reason: string }
  | { kind: 'AGENT_STATE_CHANGE_REQUESTED'; requestedState: AgentStateValue | null; stateRaw: string }
  | { kind: 'STATUS_UPDATE'; statusType: string; runtimeStatus: string | null }
  | { kind: 'TITLE_CHANGED'; title: string }
  | { kind: 'ERROR'; errorId: string | null }
  | { kind: 'OTHER' };

/** A mapped event: the common fields plus the kind-specific ones. */
export type ConversationEvent = EventCommon & EventKindFields;

export type ConversationEventKind = ConversationEvent['kind'];
