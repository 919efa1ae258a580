/**
 * A scripted stand-in for the upstream's conversation socket, for what the bundled local service will
 * not do on demand: replays in any order, replays that repeat what was already sent, a different replay
 * on each reconnect, live bursts cut off by a drop, late lower ids sent live. A real `socket.io` Server
 * on 127.0.0.1 port 0, plus the one REST route the gateway calls before each (re)connect to find the
 * socket (`GET /api/conversations/{id}`, see src/upstream/v0/socket-target.ts), and the stored events route
 * (`GET /api/conversations/{id}/events`) answered as the script says: missing as on an older server
 * (404 `Not Found`, the default, or 405), `Conversation <id> not found`, or a stored list paged as the
 * real server pages it.
 *
 * Like the real server, everything a script puts in `replay` is emitted from a Socket.IO middleware,
 * so it goes out ahead of the CONNECT packet (socket.io-client delivers it before `connect`); `live` is
 * emitted after the acknowledgement.
 *
 *   await using upstream = await startHostileSocketUpstream({
 *     connections: [{ replay: [ev(0), ev(2), agentState(1, 'running')], live: [ev(3)], drop: true }],
 *   });
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type Socket, Server as SocketIoServer } from 'socket.io';
import { conversationRecord } from './fixtures.ts';
import { closeOnce, listenOnLoopback } from './loopback.ts';

/** One upstream event dict (`oh_event` payload), as the real server sends it. */
export type WireEvent = Record<string, unknown>;

/** What one socket connection of the gateway gets, in order. */
interface ScriptedConnection {
  /** Emitted before the connect acknowledgement, in this order (the connect replay). */
  replay?: WireEvent[];
  /** Emitted right after the acknowledgement, in this order. */
  live?: WireEvent[];
  /** After `live`, the server drops the connection (the gateway then reconnects). */
  drop?: boolean;
}

/** A script: a fixed list (connection n gets entry n; later ones get the last), or a function. */
export type ConnectionScript =
  | ScriptedConnection[]
  | ((handshake: { index: number; latestEventId: number }) => ScriptedConnection);

/**
 * How the double answers `GET /api/conversations/{id}/events`: `missing-404` (a server without the
 * route: 404 `{"detail":"Not Found"}`, the default), `missing-405`, `not-found` (404
 * `{"detail":"Conversation <id> not found"}`), `fails` (500 with an internal message, as the real
 * server answers unexpected failures), or the stored events (read anew on every call).
 */
export type EventsRouteScript =
  | 'missing-404'
  | 'missing-405'
  | 'not-found'
  | 'fails'
  | (() => readonly WireEvent[]);

/** Options of {@link startHostileSocketUpstream}. */
export interface HostileSocketUpstreamOptions {
  /** The one conversation the double knows; other ids are answered `null` (unknown). */
  conversationId?: string;
  connections: ConnectionScript;
  /** @default 'missing-404' */
  eventsRoute?: EventsRouteScript;
}

/** A running double. */
export interface HostileSocketUpstream {
  /** `http://127.0.0.1:PORT`, to pass as the gateway's upstream URL. */
  url: string;
  conversationId: string;
  /** Every socket handshake so far, in order, with the `latest_event_id` it asked for. */
  handshakes: Array<{ index: number; latestEventId: number }>;
  /** Every call of the events route so far: its `start_id` and the `X-Session-API-Key` it carried. */
  eventsRequests: Array<{ startId: number; key: string | undefined }>;
  /** Sockets currently connected (acknowledged and not dropped). */
  connected(): number;
  /** Emits live events to every connected socket, now. */
  emit(events: WireEvent[]): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

let nextTimestamp = Date.UTC(2025, 7, 14, 12, 0, 0);

/** A stored agent message with this id (zone-less local timestamp, as the real server writes). */
export function agentMessage(id: number, content = `event ${id}`): WireEvent {
  nextTimestamp += 1000;
  return {
    id,
    timestamp: new Date(nextTimestamp).toISOString().replace('Z', ''),
    source: 'agent',
    message: content,
    action: 'message',
    args: { content, image_urls: [], wait_for_response: false },
  };
}

/** A stored agent_state_changed observation: the kind the real replay holds back and sends last. */
export function agentStateChanged(id: number, state: string): WireEvent {
  nextTimestamp += 1000;
  return {
    id,
    timestamp: new Date(nextTimestamp).toISOString().replace('Z', ''),
    source: 'agent',
    message: '',
    observation: 'agent_state_changed',
    content: '',
    extras: { agent_state: state, reason: '' },
  };
}

/** A status update: not stored, no event id (its `id` is a runtime status). */
export function statusUpdate(runtimeStatus: string, message = runtimeStatus): WireEvent {
  return { status_update: true, type: 'info', id: runtimeStatus, message };
}

/**
 * The real 0.53 server's connect replay of `stored` after `latestEventId`: agent-state changes are held
 * back and only the last one is sent, at the end (so it arrives after higher ids).
 */
export function realServerReplay(stored: readonly WireEvent[], latestEventId: number): WireEvent[] {
  const replay: WireEvent[] = [];
  let lastAgentState: WireEvent | undefined;
  for (const event of stored) {
    if (typeof event.id !== 'number' || event.id <= latestEventId) continue;
    if (event.observation === 'agent_state_changed') lastAgentState = event;
    else replay.push(event);
  }
  if (lastAgentState) replay.push(lastAgentState);
  return replay;
}

function scriptFor(script: ConnectionScript, index: number, latestEventId: number): ScriptedConnection {
  if (typeof script === 'function') return script({ index, latestEventId });
  return script[Math.min(index, script.length - 1)] ?? {};
}

/** Starts the double on 127.0.0.1, port 0. Close it (or `await using`) at the end of the test. */
export async function startHostileSocketUpstream(
  options: HostileSocketUpstreamOptions,
): Promise<HostileSocketUpstream> {
  const conversationId = options.conversationId ?? 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
  const handshakes: HostileSocketUpstream['handshakes'] = [];
  const eventsRequests: HostileSocketUpstream['eventsRequests'] = [];
  const sockets = new Set<Socket>();
  const eventsRoute = options.eventsRoute ?? 'missing-404';

  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const eventsMatch = /^\/api\/conversations\/([^/]+)\/events$/.exec(path);
    if (req.method === 'GET' && eventsMatch) {
      const startId = Number(url.searchParams.get('start_id') ?? 0);
      const key = req.headers['x-session-api-key'];
      eventsRequests.push({ startId, key: typeof key === 'string' ? key : undefined });
      answerEvents(res, eventsRoute, eventsMatch[1] === conversationId, eventsMatch[1] ?? '', url);
      return;
    }
    const match = /^\/api\/conversations\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && match) {
      // Like the real server: an unknown id is 200 with body null.
      // A relative url: single-server mode, so the gateway opens the socket on this same origin.
      const body =
        match[1] === conversationId
          ? conversationRecord(conversationId, {
              last_updated_at: '2025-08-14T12:00:00.000000Z',
              created_at: '2025-08-14T12:00:00.000000Z',
            })
          : null;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ detail: 'Not Found' }));
  });
  const io = new SocketIoServer(http, { path: '/socket.io/', transports: ['websocket'], serveClient: false });
  const scripts = new WeakMap<Socket, ScriptedConnection>();

  io.use((socket, next) => {
    const query = socket.handshake.query;
    if (query.conversation_id !== conversationId) {
      next(new Error('Failed to join conversation'));
      return;
    }
    const latestEventId = Number(query.latest_event_id ?? -1);
    const handshake = { index: handshakes.length, latestEventId };
    handshakes.push(handshake);
    const script = scriptFor(options.connections, handshake.index, latestEventId);
    scripts.set(socket, script);
    // Emitted by the middleware: these packets precede the CONNECT packet, as on the real server.
    for (const event of script.replay ?? []) socket.emit('oh_event', event);
    next();
  });
  io.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('disconnect', () => sockets.delete(socket));
    const script = scripts.get(socket) ?? {};
    for (const event of script.live ?? []) socket.emit('oh_event', event);
    // The server's close goes out after the events above on the same websocket: a drop right after
    // the burst, before anything else.
    if (script.drop) socket.disconnect(true);
  });

  const url = await listenOnLoopback(http);
  const close = closeOnce(
    () =>
      new Promise<void>((resolve) => {
        io.close(() => resolve());
        http.closeAllConnections();
      }),
  );
  return {
    url,
    conversationId,
    handshakes,
    eventsRequests,
    connected: () => sockets.size,
    emit(events) {
      for (const socket of sockets) for (const event of events) socket.emit('oh_event', event);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The events route as scripted; a known conversation's stored events are paged like the real server's. */
function answerEvents(
  res: ServerResponse,
  script: EventsRouteScript,
  known: boolean,
  requestedId: string,
  url: URL,
): void {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (script === 'missing-404') {
    send(404, { detail: 'Not Found' });
  } else if (script === 'missing-405') {
    send(405, { detail: 'Method Not Allowed' });
  } else if (script === 'fails') {
    send(500, { status: 'error', message: 'Failed to get events: /internal/path/events.json' });
  } else if (script === 'not-found' || !known) {
    send(404, { detail: `Conversation ${requestedId} not found` });
  } else {
    const startId = Number(url.searchParams.get('start_id') ?? 0);
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const within = script().filter((event) => typeof event.id === 'number' && event.id >= startId);
    send(200, { events: within.slice(0, limit), has_more: within.length > limit });
  }
}
