/**
 * HTTP floor of the history scenario: the least work Node can do for the gateway's answer to the bench's
 * `conversation(id:) { events(last: 50) }` document, run as its own process beside the gateway
 * (bench/lib/http-comparison.ts alternates them).
 *
 *   node --import tsx bench/floors/history-floor.ts --upstream http://127.0.0.1:PORT [--api v0|v1]
 *
 * Every request (the load generator sends the gateway's GraphQL POST) is read to its end and its JSON
 * parsed for `variables.id` (a raw conversation id), then answered from the upstream calls the gateway
 * makes for that document, one after the other as the gateway makes them, carrying the caller's
 * X-Session-API-Key through one undici Pool per origin (the gateway's default 64 connections):
 * - V0: `GET /api/conversations/{id}` (the record: the conversation exists; its body is not read
 *   further), then `GET /api/conversations/{id}/events?start_id=0&reverse=true&limit=50`
 *   (`{events, has_more}`, newest first);
 * - V1: the app server's `GET /api/v1/app-conversations?ids={id}` (the record: where its agent server
 *   is and the sandbox's `session_api_key`), then the agent server's
 *   `GET {conversation_url}/events/search?limit=50&sort_order=TIMESTAMP_DESC` with that key
 *   (`{items, next_page_id}`, newest first).
 * The page is parsed, its events reversed (oldest first, as the connection gives them), each mapped to
 * the fields the bench selects (`__typename`, `eventId`, `timestamp`, `source`, `message`,
 * `upstreamKind`, and on AgentStateChangeRequestedEvent `requestedState`, `requestedStateRaw`) with its
 * cursor (base64url of `[1, api, ...position]`, as src/upstream/port/event-cursor.ts seals it), and
 * `{data: {conversation: {events: {edges, pageInfo: {hasPreviousPage, startCursor}}}}}` serialized with
 * keys in the document's order. The bench compares its bytes with the gateway's before it measures
 * anything (bench/scenarios/history.ts).
 *
 * What it leaves out, as a floor should: GraphQL itself (the document is known), global ids, arguments
 * other than `id`, timestamps other than the local service's (canonical UTC text: `Z` appended when
 * missing, no range check), kind-specific fields the document does not select. Type names follow the
 * gateway's tables (src/upstream/v0/events.ts, src/upstream/v1/events.ts) by kind and source; V1's
 * finer rules for file-change tools (which may make one OtherEvent) are left out. Not a product: no
 * limits, no errors mapped, a V1 conversation whose sandbox is not running is answered 502.
 * Prints `floor: http://HOST:PORT/graphql` once it listens.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { AGENT_STATES } from '../../src/contract/v0/records.ts';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    api: { type: 'string', default: 'v0' },
  },
});
if (!values.upstream) throw new Error('--upstream is required');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');
const PAGE = 50;

/** One Pool per origin: the service (V0, V1's app server) and each V1 agent server. */
const pools = new Map<string, Pool>();
function poolOf(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 64, pipelining: 1 });
    pools.set(origin, pool);
  }
  return pool;
}
const service = poolOf(new URL(values.upstream).origin);

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

type Raw = Record<string, unknown>;
/** The mapped node: the interface's fields, then the AgentStateChangeRequestedEvent ones where it is one. */
interface Node {
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
const cursorOf = (position: unknown[]): string =>
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

function v0Node(raw: Raw, id: number): Node {
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
  const node: Node = {
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

/** The V0 answer: record, then the newest page of events. */
async function v0Answer(id: string, key: string | undefined): Promise<string> {
  const base = `/api/conversations/${encodeURIComponent(id)}`;
  const record = await get(service, base, key);
  if (record === null || record === 'null') return NOT_FOUND;
  const text = await get(service, `${base}/events?start_id=0&reverse=true&limit=${PAGE}`, key);
  if (text === null) throw new Error('events route refused');
  const page = JSON.parse(text) as { events: Raw[]; has_more: boolean };
  const edges: Array<{ cursor: string; node: Node }> = [];
  for (let i = page.events.length - 1; i >= 0; i--) {
    const raw = page.events[i] as Raw;
    // The upstream's `null` placeholders are never delivered; a stored event always has an id.
    if (raw.action === 'null' || raw.observation === 'null' || !Number.isInteger(raw.id)) continue;
    const eventId = raw.id as number;
    edges.push({ cursor: cursorOf([eventId]), node: v0Node(raw, eventId) });
  }
  return answer(edges, page.has_more);
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

function v1Node(raw: Raw, kind: string): Node | null {
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
  const node: Node = {
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

/** The V1 answer: the app server's record (where the agent server is), then its newest page. */
async function v1Answer(id: string, key: string | undefined): Promise<string> {
  const text = await get(service, `/api/v1/app-conversations?ids=${encodeURIComponent(id)}`, key);
  const record = text === null ? null : (JSON.parse(text) as Array<Raw | null>)[0];
  if (!record) return NOT_FOUND;
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
  const edges: Array<{ cursor: string; node: Node }> = [];
  for (let i = page.items.length - 1; i >= 0; i--) {
    const raw = page.items[i] as Raw;
    // An event without an id cannot be a cursor, so it is no edge.
    if (typeof raw.id !== 'string' || raw.id === '') continue;
    const kind = str(raw.kind);
    const node = v1Node(raw, kind ?? 'unknown');
    if (node) edges.push({ cursor: cursorOf([raw.id, str(raw.timestamp) ?? '', kind ?? '']), node });
  }
  return answer(edges, typeof page.next_page_id === 'string');
}

// --- The answer ----------------------------------------------------------------------------------------

const NOT_FOUND = JSON.stringify({ data: { conversation: null } });

function answer(edges: Array<{ cursor: string; node: Node }>, hasPreviousPage: boolean): string {
  return JSON.stringify({
    data: {
      conversation: {
        events: { edges, pageInfo: { hasPreviousPage, startCursor: edges[0]?.cursor ?? null } },
      },
    },
  });
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.once('end', async () => {
    try {
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { variables?: { id?: unknown } };
      const id = request.variables?.id;
      if (typeof id !== 'string') throw new Error('variables.id is required');
      const key = req.headers['x-session-api-key'];
      const caller = typeof key === 'string' ? key : undefined;
      const body = api === 'v0' ? await v0Answer(id, caller) : await v1Answer(id, caller);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    } catch (error) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ message: String(error) }] }));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`floor: http://127.0.0.1:${port}/graphql (history, ${api})`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void Promise.all([...pools.values()].map((pool) => pool.close())).then(() => process.exit(0));
});
