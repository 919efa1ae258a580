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
 * The reads and the mapping are history-page.ts's (shared with engine-floor.ts).
 *
 * What it leaves out, as a floor should: GraphQL itself (the document is known), global ids, arguments
 * other than `id`, timestamps other than the local service's (canonical UTC text: `Z` appended when
 * missing, no range check), kind-specific fields the document does not select. Type names follow the
 * gateway's tables (src/upstream/v0/events.ts, src/upstream/v1/events.ts) by kind and source; V1's
 * finer rules for file-change tools (which may make one OtherEvent) are left out. Not a product: no
 * limits, no errors mapped, a V1 conversation whose sandbox is not running is answered 502.
 * Prints `floor: http://HOST:PORT/graphql` once it listens.
 */
import { parseArgs } from 'node:util';
import { serveFloor } from './floor-server.ts';
import { historyReader } from './history-page.ts';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    api: { type: 'string', default: 'v0' },
  },
});
if (!values.upstream) throw new Error('--upstream is required');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');

const reader = historyReader(values.upstream, api);
const NOT_FOUND = JSON.stringify({ data: { conversation: null } });

serveFloor({
  label: `history, ${api}`,
  readBody: true,
  async answer(req, _res, body) {
    const request = JSON.parse(body) as { variables?: { id?: unknown } };
    const id = request.variables?.id;
    if (typeof id !== 'string') throw new Error('variables.id is required');
    const key = req.headers['x-session-api-key'];
    const events = await reader.read(id, typeof key === 'string' ? key : undefined);
    return events === null ? NOT_FOUND : JSON.stringify({ data: { conversation: { events } } });
  },
  close: () => reader.close(),
});
