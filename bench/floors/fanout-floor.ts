/**
 * Fan-out floor: the least work Node can do to serve `conversationEvents` to graphql-ws clients, run as
 * its own process beside the gateway (bench/scenarios/fanout.ts and many-conversations.ts alternate them).
 *
 *   node --import tsx bench/floors/fanout-floor.ts --upstream http://127.0.0.1:PORT
 *
 * A bare graphql-transport-ws server on `ws` (connection_init -> ack, ping -> pong, subscribe, complete;
 * the operation's `id` variable names the conversation, nothing else of the document is read), one bare
 * Socket.IO client per watched conversation (opened on its first subscriber, live events only), and per
 * upstream event one shared payload string `{"data":{"conversationEvents":{eventId,timestamp}}}`; each
 * subscriber's frame is its own prefix plus that payload, and each socket gets one corked write per
 * turn for all the events of that turn. Keep-alive as any graphql-ws server does it (a dead client
 * must not hold its socket forever): each socket is pinged every 12 s and terminated when it has not
 * answered the previous ping, one twelfth of the sockets per second (as the gateway spreads them).
 * Prints `floor: http://HOST:PORT/graphql` once it listens.
 * Not a product: no limits, auth is only passed through to the upstream.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket as NetSocket } from 'node:net';
import { parseArgs } from 'node:util';
import { io, type Socket } from 'socket.io-client';
import { type WebSocket, WebSocketServer } from 'ws';

const { values } = parseArgs({ options: { upstream: { type: 'string' } } });
const upstreamUrl = values.upstream;
if (!upstreamUrl) throw new Error('--upstream is required');

interface Subscriber {
  ws: WebSocket;
  /** `{"id":"<id>","type":"next","payload":` */
  prefix: string;
}

interface Watched {
  socket: Socket;
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

function watch(conversationId: string, key: string | undefined): Watched {
  let entry = watched.get(conversationId);
  if (entry) return entry;
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
  const created: Watched = { socket, subscribers: new Set(), pending: [] };
  socket.on('oh_event', (event: { id?: unknown; timestamp?: unknown }) => {
    if (created.subscribers.size === 0) return;
    created.pending.push(
      `{"data":{"conversationEvents":{"eventId":${typeof event.id === 'number' ? event.id : null},"timestamp":${JSON.stringify(utc(event.timestamp))}}}}`,
    );
    dirty.add(created);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  });
  entry = created;
  watched.set(conversationId, entry);
  return entry;
}

const server = createServer((_req, res) => {
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
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`floor: http://127.0.0.1:${port}/graphql (fan-out)`);
});
process.once('SIGTERM', () => {
  for (const conversation of watched.values()) conversation.socket.close();
  for (const ws of wss.clients) ws.terminate();
  wss.close();
  server.close();
  server.closeAllConnections();
  setImmediate(() => process.exit(0));
});
