/**
 * Fan-out floor: the least work Node can do to serve `conversationEvents` to graphql-ws clients, run as
 * its own process beside the gateway (bench/scenarios/fanout.ts and many-conversations.ts alternate them).
 *
 *   node --import tsx bench/floors/fanout-floor.ts --upstream http://127.0.0.1:PORT [--api v0|v1]
 *
 * A bare graphql-transport-ws server on `ws` (connection_init -> ack, ping -> pong, subscribe, complete;
 * the operation's `id` variable names the conversation, nothing else of the document is read), one bare
 * upstream client per watched conversation (opened on its first subscriber, live events only: V0 a
 * Socket.IO client on the service; V1 a `ws` client on the conversation's agent-server event socket
 * `/sockets/events/{id}`, found once by the app server's `GET /api/v1/app-conversations?ids=` and
 * authenticated by the sandbox's key as `X-Session-API-Key` header, its connect-state first frame
 * skipped), and per
 * upstream event one shared payload string `{"data":{"conversationEvents":{eventId,timestamp}}}`; each
 * subscriber's frame is its own prefix plus that payload, and each socket gets one corked write per
 * turn for all the events of that turn. Keep-alive as any graphql-ws server does it (a dead client
 * must not hold its socket forever): each socket is pinged every 12 s and terminated when it has not
 * answered the previous ping, one twelfth of the sockets per second (as the gateway spreads them).
 * `GET /metrics` answers `upstream_sockets_open <n>` as the gateway's gauge does (V1 has no upstream count).
 * Prints `floor: http://HOST:PORT/graphql` once it listens.
 * Not a product: no limits, auth is only passed through to the upstream.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket as NetSocket } from 'node:net';
import { parseArgs } from 'node:util';
import { io } from 'socket.io-client';
import { WebSocket, WebSocketServer } from 'ws';

const { values } = parseArgs({
  options: { upstream: { type: 'string' }, api: { type: 'string', default: 'v0' } },
});
const upstreamUrl = values.upstream;
if (!upstreamUrl) throw new Error('--upstream is required');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');

interface Subscriber {
  ws: WebSocket;
  /** `{"id":"<id>","type":"next","payload":` */
  prefix: string;
}

interface Watched {
  /** Closes the upstream socket. */
  close(): void;
  /** Whether the upstream socket is open (for `upstream_sockets_open`). */
  open(): boolean;
  subscribers: Set<Subscriber>;
  /** Payloads of events received this turn, flushed together. */
  pending: string[];
}

const watched = new Map<string, Watched>();
const dirty = new Set<Watched>();
let flushScheduled = false;

/** Zone-less upstream timestamps are UTC on the bench's service (TZ=UTC), like the gateway reads them. */
function utc(timestamp: unknown): string | null {
  if (typeof timestamp !== 'string') return null;
  return /(Z|[+-]\d\d:?\d\d)$/.test(timestamp) ? timestamp : `${timestamp}Z`;
}

function flush(): void {
  flushScheduled = false;
  for (const conversation of dirty) {
    const payloads = conversation.pending;
    conversation.pending = [];
    for (const subscriber of conversation.subscribers) {
      const raw = (subscriber.ws as unknown as { _socket: NetSocket })._socket;
      raw.cork();
      for (const payload of payloads) subscriber.ws.send(`${subscriber.prefix}${payload}}`);
      raw.uncork();
    }
  }
  dirty.clear();
}

/** One upstream event: its shared payload, queued for this turn's flush. */
function deliver(conversation: Watched, event: { id?: unknown; timestamp?: unknown }): void {
  if (conversation.subscribers.size === 0) return;
  conversation.pending.push(
    `{"data":{"conversationEvents":{"eventId":${typeof event.id === 'number' ? event.id : null},"timestamp":${JSON.stringify(utc(event.timestamp))}}}}`,
  );
  dirty.add(conversation);
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flush);
  }
}

/** V0: a Socket.IO client on the service. */
function watchV0(conversation: Watched, conversationId: string, key: string | undefined): void {
  const socket = io(upstreamUrl as string, {
    transports: ['websocket'],
    // Live events only: a latest id above any stored one skips the replay.
    query: {
      conversation_id: conversationId,
      latest_event_id: '1000000000',
      ...(key ? { session_api_key: key } : {}),
    },
    reconnection: true,
  });
  socket.on('oh_event', (event: { id?: unknown; timestamp?: unknown }) => deliver(conversation, event));
  conversation.close = () => socket.close();
  conversation.open = () => socket.connected;
}

/**
 * V1: where the agent server is (the app server's batch get, once), then a bare `ws` client on its
 * event socket with no replay asked (live events only). Frames are events; the first is the connect
 * state (`full_state`, never stored), which the gateway does not deliver either. No reconnection: a
 * bench conversation's sandbox never stops during a run.
 */
async function watchV1(conversation: Watched, conversationId: string, key: string | undefined) {
  const response = await fetch(`${upstreamUrl}/api/v1/app-conversations?ids=${conversationId}`, {
    headers: key ? { 'x-session-api-key': key } : {},
  });
  const [record] = (await response.json()) as Array<{
    conversation_url?: string | null;
    session_api_key?: string | null;
  } | null>;
  if (!record?.conversation_url || !record.session_api_key) {
    console.error(`floor: conversation ${conversationId} has no running agent server`);
    return;
  }
  const url = new URL(record.conversation_url);
  url.protocol = 'ws:';
  url.pathname = url.pathname.replace(/\/api\/conversations\/([^/]+)\/?$/, '/sockets/events/$1');
  const socket = new WebSocket(url, {
    headers: { 'X-Session-API-Key': record.session_api_key },
    perMessageDeflate: false,
  });
  socket.on('error', (error) => console.error(`floor: agent socket: ${error.message}`));
  let first = true;
  socket.on('message', (data) => {
    if (first) {
      first = false;
      return;
    }
    deliver(conversation, JSON.parse(String(data)) as { id?: unknown; timestamp?: unknown });
  });
  conversation.close = () => socket.terminate();
  conversation.open = () => socket.readyState === WebSocket.OPEN;
}

function watch(conversationId: string, key: string | undefined): Watched {
  let entry = watched.get(conversationId);
  if (entry) return entry;
  entry = { close: () => {}, open: () => false, subscribers: new Set(), pending: [] };
  if (api === 'v0') watchV0(entry, conversationId, key);
  else void watchV1(entry, conversationId, key);
  watched.set(conversationId, entry);
  return entry;
}

const server = createServer((req, res) => {
  if (req.url === '/metrics') {
    let open = 0;
    for (const conversation of watched.values()) if (conversation.open()) open++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`upstream_sockets_open ${open}\n`);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"data":{}}');
});
const wss = new WebSocketServer({
  server,
  handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false),
});
/** Keep-alive: twelve slices of sockets, one pinged per second, so each socket every 12 s. */
const KEEP_ALIVE_MS = 12_000;
const pingSlices = Array.from({ length: 12 }, () => new Set<WebSocket>());
const awaitingPong = new WeakSet<WebSocket>();
let nextSlice = 0;
let pingTick = 0;
setInterval(() => {
  for (const ws of pingSlices[pingTick++ % 12] as Set<WebSocket>) {
    if (awaitingPong.has(ws)) {
      ws.terminate();
      continue;
    }
    awaitingPong.add(ws);
    ws.ping();
  }
}, KEEP_ALIVE_MS / 12).unref();

wss.on('connection', (ws) => {
  const slice = pingSlices[nextSlice++ % 12] as Set<WebSocket>;
  slice.add(ws);
  ws.on('pong', () => awaitingPong.delete(ws));
  let key: string | undefined;
  const mine = new Map<string, { subscriber: Subscriber; conversation: Watched }>();
  ws.on('message', (data) => {
    let message: { type?: string; id?: string; payload?: Record<string, unknown> };
    try {
      message = JSON.parse(String(data));
    } catch {
      ws.close(4400, 'Invalid message');
      return;
    }
    switch (message.type) {
      case 'connection_init': {
        const presented = message.payload?.['X-Session-API-Key'];
        key = typeof presented === 'string' ? presented : undefined;
        ws.send('{"type":"connection_ack"}');
        return;
      }
      case 'ping':
        ws.send('{"type":"pong"}');
        return;
      case 'subscribe': {
        const id = String(message.id);
        const variables = (message.payload?.variables ?? {}) as { id?: unknown };
        const conversation = watch(String(variables.id), key);
        const subscriber = { ws, prefix: `{"id":${JSON.stringify(id)},"type":"next","payload":` };
        conversation.subscribers.add(subscriber);
        mine.set(id, { subscriber, conversation });
        return;
      }
      case 'complete': {
        const entry = mine.get(String(message.id));
        entry?.conversation.subscribers.delete(entry.subscriber);
        mine.delete(String(message.id));
        return;
      }
    }
  });
  ws.on('close', () => {
    slice.delete(ws);
    for (const { subscriber, conversation } of mine.values()) conversation.subscribers.delete(subscriber);
    mine.clear();
  });
});
if (api === 'v1') {
  // The first fetch loads and compiles Node's HTTP client (undici, its llhttp wasm): done before the
  // scenario's RSS baseline, as the gateway's baseline query has already gone upstream, so that cost is
  // not charged to the subscribers (the answer, without a key or ids, does not matter).
  await (await fetch(`${upstreamUrl}/api/v1/app-conversations/search?limit=1`)).arrayBuffer();
}
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`floor: http://127.0.0.1:${port}/graphql (fan-out, ${api})`);
});
process.once('SIGTERM', () => {
  for (const conversation of watched.values()) conversation.close();
  for (const ws of wss.clients) ws.terminate();
  wss.close();
  server.close();
  server.closeAllConnections();
  setImmediate(() => process.exit(0));
});
