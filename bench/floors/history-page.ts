/**
 * The history floors' upstream reads and event mapping (bench/floors/history-floor.ts and
 * engine-floor.ts): the newest page of a conversation's events read with the upstream calls the gateway
 * makes for the bench's `conversation(id:) { events(last: 50) }` document, one after the other as the
 * gateway makes them, and mapped to the connection the gateway answers (history-floor.ts says what is
 * read and what is left out).
 */
import { Pool } from 'undici';
import { AGENT_STATES } from '../../src/contract/v0/records.ts';
import type { BenchApi } from '../lib/bench-api.ts';

const PAGE = 50;

type Raw = Record<string, unknown>;
/** The mapped node: the interface's fields, then the AgentStateChangeRequestedEvent ones where it is one. */
export interface HistoryNode {
  __typename: string;
  eventId: number | null;
  timestamp: string | null;
  source: string | null;
  message: string;
  upstreamKind: string;
  requestedState?: string;
  requestedStateRaw?: string;
}

/** Enum names of wire values (the GraphQL enum's: the value upper-cased, else UNKNOWN). */
const SOURCES: Record<string, string> = { agent: 'AGENT', user: 'USER', environment: 'ENVIRONMENT' };
const STATES: Record<string, string> = Object.fromEntries(AGENT_STATES.map((s) => [s, s.toUpperCase()]));
const enumName = (names: Record<string, string>, raw: unknown): string | null =>
  typeof raw === 'string' ? (names[raw] ?? 'UNKNOWN') : null;
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
/** The local service's timestamps are canonical UTC text, zone-less in events. */
const utc = (value: unknown): string | null =>
  typeof value === 'string' ? (value.endsWith('Z') ? value : `${value}Z`) : null;
const cursorOf = (api: BenchApi, position: unknown[]): string =>
  Buffer.from(JSON.stringify([1, api, ...position])).toString('base64url');

// --- V0 ------------------------------------------------------------------------------------------------

/** V0 action / observation name -> type name (`message` is split by source). */
const V0_ACTIONS: Record<string, string> = {
  run: 'CommandEvent',
  read: 'FileReadEvent',
  write: 'FileWriteEvent',
  edit: 'FileEditEvent',
  browse: 'BrowseEvent',
  think: 'ThinkEvent',
  finish: 'FinishEvent',
  change_agent_state: 'AgentStateChangeRequestedEvent',
};
const V0_OBSERVATIONS: Record<string, string> = {
  run: 'CommandOutputEvent',
  read: 'FileReadEvent',
  write: 'FileWriteEvent',
  edit: 'FileEditEvent',
  browse: 'BrowseEvent',
  think: 'ThinkEvent',
  agent_state_changed: 'AgentStateChangedEvent',
  error: 'ErrorEvent',
};

function v0Node(raw: Raw, id: number): HistoryNode {
  const { action, observation } = raw;
  let typename = 'OtherEvent';
  let upstreamKind = 'unknown';
  if (typeof action === 'string') {
    upstreamKind = action;
    typename =
      action === 'message'
        ? raw.source === 'user'
          ? 'UserMessageEvent'
          : 'AgentMessageEvent'
        : (V0_ACTIONS[action] ?? 'OtherEvent');
  } else if (typeof observation === 'string') {
    upstreamKind = observation;
    typename = V0_OBSERVATIONS[observation] ?? 'OtherEvent';
  }
  const node: HistoryNode = {
    __typename: typename,
    eventId: id,
    timestamp: utc(raw.timestamp),
    source: enumName(SOURCES, raw.source),
    message: str(raw.message) ?? '',
    upstreamKind,
  };
  if (typename === 'AgentStateChangeRequestedEvent') {
    const stateRaw = str((raw.args as Raw | undefined)?.agent_state) ?? '';
    node.requestedState = STATES[stateRaw] ?? 'UNKNOWN';
    node.requestedStateRaw = stateRaw;
  }
  return node;
}

// --- V1 ------------------------------------------------------------------------------------------------

/** V1 action / observation kinds -> type name (the gateway's mapAction / mapObservation tables). */
const V1_ACTIONS: Record<string, string> = {
  TerminalAction: 'CommandEvent',
  ExecuteBashAction: 'CommandEvent',
  FileEditorAction: 'FileEditEvent',
  PlanningFileEditorAction: 'FileEditEvent',
  WriteFileAction: 'FileWriteEvent',
  EditAction: 'FileEditEvent',
  ApplyPatchAction: 'FileEditEvent',
  ThinkAction: 'ThinkEvent',
  FinishAction: 'FinishEvent',
  BrowserNavigateAction: 'BrowseEvent',
};
const V1_OBSERVATIONS: Record<string, string> = {
  TerminalObservation: 'CommandOutputEvent',
  ExecuteBashObservation: 'CommandOutputEvent',
};

/** The text parts of an SDK content list, joined. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  let text = '';
  let first = true;
  for (const part of content as Raw[]) {
    if (part?.type !== 'text' || typeof part.text !== 'string') continue;
    text = first ? part.text : `${text}\n${part.text}`;
    first = false;
  }
  return text;
}

function v1Node(raw: Raw, kind: string): HistoryNode | null {
  let typename = 'OtherEvent';
  let upstreamKind = kind;
  let message = '';
  let stateRaw: string | null = null;
  switch (kind) {
    case 'MessageEvent':
      typename = raw.source === 'user' ? 'UserMessageEvent' : 'AgentMessageEvent';
      message = textOf((raw.llm_message as Raw | undefined)?.content);
      break;
    case 'ActionEvent': {
      upstreamKind = str((raw.action as Raw | undefined)?.kind) ?? 'unknown';
      typename = V1_ACTIONS[upstreamKind] ?? 'OtherEvent';
      message = textOf(raw.thought);
      break;
    }
    case 'ObservationEvent': {
      const observation = raw.observation as Raw | undefined;
      upstreamKind = str(observation?.kind) ?? 'unknown';
      typename = V1_OBSERVATIONS[upstreamKind] ?? 'OtherEvent';
      message = textOf(observation?.content);
      break;
    }
    case 'ConversationStateUpdateEvent':
      if (raw.key === 'full_state') return null;
      if (raw.key === 'execution_status') typename = 'AgentStateChangedEvent';
      break;
    case 'PauseEvent':
      typename = 'AgentStateChangeRequestedEvent';
      stateRaw = 'paused';
      break;
    case 'AgentErrorEvent':
      typename = 'ErrorEvent';
      message = str(raw.error) ?? '';
      break;
    case 'ConversationErrorEvent':
    case 'ServerErrorEvent':
      typename = 'ErrorEvent';
      message = str(raw.detail) ?? '';
      break;
    default:
      message = str(raw.rejection_reason) ?? '';
  }
  const node: HistoryNode = {
    __typename: typename,
    eventId: null,
    timestamp: utc(raw.timestamp),
    source: enumName(SOURCES, raw.source),
    message,
    upstreamKind,
  };
  if (stateRaw !== null) {
    node.requestedState = STATES[stateRaw] ?? 'UNKNOWN';
    node.requestedStateRaw = stateRaw;
  }
  return node;
}

// --- The reads -----------------------------------------------------------------------------------------

/** One edge of the connection. */
export interface HistoryEdge {
  cursor: string;
  node: HistoryNode;
}

/** `events(last: 50)`: the edges oldest first, and the page info the document selects. */
export interface HistoryEvents {
  edges: HistoryEdge[];
  pageInfo: { hasPreviousPage: boolean; startCursor: string | null };
}

/** Reads a conversation's newest events through its own undici Pools. */
export interface HistoryReader {
  /** The newest page of `id`'s events with the caller's key; null when the conversation is not found. */
  read(id: string, key: string | undefined): Promise<HistoryEvents | null>;
  close(): Promise<void>;
}

function eventsOf(edges: HistoryEdge[], hasPreviousPage: boolean): HistoryEvents {
  return { edges, pageInfo: { hasPreviousPage, startCursor: edges[0]?.cursor ?? null } };
}

/** GET `path` with `key`; the body as text, or null for any status but 200. */
async function get(pool: Pool, path: string, key: string | undefined): Promise<string | null> {
  const response = await pool.request({
    path,
    method: 'GET',
    headers: key === undefined ? {} : { 'x-session-api-key': key },
  });
  if (response.statusCode !== 200) {
    await response.body.dump();
    return null;
  }
  return response.body.text();
}

/**
 * A reader for the service at `upstream` speaking `api`, with one Pool per origin (the gateway's default
 * 64 connections): the service (V0, V1's app server) and each V1 agent server.
 */
export function historyReader(upstream: string, api: BenchApi): HistoryReader {
  const pools = new Map<string, Pool>();
  const poolOf = (origin: string): Pool => {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connections: 64, pipelining: 1 });
      pools.set(origin, pool);
    }
    return pool;
  };
  const service = poolOf(new URL(upstream).origin);

  /** V0: the record, then the newest page of events. */
  const v0Events = async (id: string, key: string | undefined): Promise<HistoryEvents | null> => {
    const base = `/api/conversations/${encodeURIComponent(id)}`;
    const record = await get(service, base, key);
    if (record === null || record === 'null') return null;
    const text = await get(service, `${base}/events?start_id=0&reverse=true&limit=${PAGE}`, key);
    if (text === null) throw new Error('events route refused');
    const page = JSON.parse(text) as { events: Raw[]; has_more: boolean };
    const edges: HistoryEdge[] = [];
    for (let i = page.events.length - 1; i >= 0; i--) {
      const raw = page.events[i] as Raw;
      // The upstream's `null` placeholders are never delivered; a stored event always has an id.
      if (raw.action === 'null' || raw.observation === 'null' || !Number.isInteger(raw.id)) continue;
      const eventId = raw.id as number;
      edges.push({ cursor: cursorOf(api, [eventId]), node: v0Node(raw, eventId) });
    }
    return eventsOf(edges, page.has_more);
  };

  /** V1: the app server's record (where the agent server is), then its newest page. */
  const v1Events = async (id: string, key: string | undefined): Promise<HistoryEvents | null> => {
    const text = await get(service, `/api/v1/app-conversations?ids=${encodeURIComponent(id)}`, key);
    const record = text === null ? null : (JSON.parse(text) as Array<Raw | null>)[0];
    if (!record) return null;
    const url = str(record.conversation_url);
    const agentKey = str(record.session_api_key);
    if (record.sandbox_status !== 'RUNNING' || url === null || agentKey === null)
      throw new Error('not covered: the conversation has no running agent server');
    const agent = new URL(url);
    const body = await get(
      poolOf(agent.origin),
      `${agent.pathname}/events/search?limit=${PAGE}&sort_order=TIMESTAMP_DESC`,
      agentKey,
    );
    if (body === null) throw new Error('events search refused');
    const page = JSON.parse(body) as { items: Raw[]; next_page_id?: unknown };
    const edges: HistoryEdge[] = [];
    for (let i = page.items.length - 1; i >= 0; i--) {
      const raw = page.items[i] as Raw;
      // An event without an id cannot be a cursor, so it is no edge.
      if (typeof raw.id !== 'string' || raw.id === '') continue;
      const kind = str(raw.kind);
      const node = v1Node(raw, kind ?? 'unknown');
      if (node) edges.push({ cursor: cursorOf(api, [raw.id, str(raw.timestamp) ?? '', kind ?? '']), node });
    }
    return eventsOf(edges, typeof page.next_page_id === 'string');
  };

  return {
    read: api === 'v0' ? v0Events : v1Events,
    close: async () => {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
    },
  };
}
