/**
 * A scripted stand-in for a V1 deployment's one conversation, for what the bundled V1 service will not
 * do on demand: an agent-server event socket that refuses before accept (HTTP 403), closes with 4001,
 * 4004 or 1013, ignores the `X-Session-API-Key` header (as behind a proxy that drops it, or an agent
 * server too old for it), sends frames twice or replays what was not asked for, drops, or is never
 * reachable. A real HTTP server with a real `ws` WebSocket server on 127.0.0.1 port 0, answering the
 * app server's batch get (the gateway reads the conversation before each connect), its start-task
 * search, and the agent server's events search (inclusive `page_id`, `timestamp__gte`) from `stored`.
 *
 *   await using double = await startV1SocketDouble({ connections: [{ frames: [ev(1), ev(1)], drop: true }] });
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { closeOnce, listenOnLoopback, stopServer } from './loopback.ts';

/** One SDK event as the agent server sends it. */
export type V1WireEvent = Record<string, unknown>;

/** What one socket connection of the gateway gets. */
interface ScriptedV1Connection {
  /** Refused before accept with this HTTP status (403: the key was refused). */
  refuse?: number;
  /** Accepted, authenticated, then closed with this code before any frame (4001, 4004, 1013). */
  closeWith?: number;
  /** Sent after the connect state (`full_state`), in order, as soon as the socket is authenticated. */
  frames?: V1WireEvent[];
  /** After `frames`, the connection drops (the gateway then reconnects). */
  drop?: boolean;
}

/** How the double's socket takes a key: as v1.43.1 does, or as an agent server that ignores one way. */
type SocketAuth = 'all' | 'ignore-header' | 'query-only';

/** Options of {@link startV1SocketDouble}. */
export interface V1SocketDoubleOptions {
  /** Connection n gets entry n; later ones the last. */
  connections: ScriptedV1Connection[];
  /** The events search's answer, read anew on every call. @default () => [] */
  stored?: () => readonly V1WireEvent[];
  /** @default 'all' */
  auth?: SocketAuth;
  /** The app server answers the conversation as deleted (`[null]`) once this is true. */
  deleted?: () => boolean;
  /** The app server answers the conversation's sandbox as PAUSED (no URL, no key) while this is true. */
  paused?: () => boolean;
  /**
   * The conversation's start finishes between the gateway's two reads: the app server does not know
   * it (`[null]`) until the start-task search has answered, which names its task READY.
   */
  startsBetweenReads?: boolean;
}

/** A running double. */
export interface V1SocketDouble {
  url: string;
  /** 32 hex. */
  conversationId: string;
  /** The sandbox's key (what the gateway must never log). */
  sessionApiKey: string;
  /** Every socket handshake: how the key came (`header`, `query`, `none`). */
  handshakes: Array<{ key: 'header' | 'query' | 'none' }>;
  /** Auth frames received on sockets accepted without a key. */
  authFrames: number;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

let clock = Date.UTC(2026, 7, 21, 18, 0, 0);

/** A stored agent message with a fresh dashed id and a naive, strictly later timestamp. */
export function agentMessage(text: string): V1WireEvent {
  clock += 1000;
  return {
    id: randomUUID(),
    // Naive server-local time with microseconds, as the SDK writes it.
    timestamp: new Date(clock).toISOString().replace('Z', '000'),
    source: 'agent',
    llm_message: { role: 'assistant', content: [{ type: 'text', text }] },
    activated_skills: [],
    extended_content: [],
    kind: 'MessageEvent',
  };
}

/** Starts the double. Close it (or `await using`) at the end of the test. */
export async function startV1SocketDouble(options: V1SocketDoubleOptions): Promise<V1SocketDouble> {
  const conversationId = randomUUID().replaceAll('-', '');
  const dashed = `${conversationId.slice(0, 8)}-${conversationId.slice(8, 12)}-${conversationId.slice(12, 16)}-${conversationId.slice(16, 20)}-${conversationId.slice(20)}`;
  const sessionApiKey = `sandbox${randomUUID().replaceAll('-', '')}`;
  const stored = options.stored ?? (() => []);
  const auth = options.auth ?? 'all';
  const handshakes: V1SocketDouble['handshakes'] = [];
  let taskSearched = false;
  const wss = new WebSocketServer({ noServer: true });
  let url = '';
  const double: V1SocketDouble = {
    url,
    conversationId,
    sessionApiKey,
    handshakes,
    authFrames: 0,
    close: async () => {},
    [Symbol.asyncDispose]: async () => {},
  };

  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const target = new URL(request.url ?? '/', 'http://double');
    if (target.pathname === '/api/v1/app-conversations') {
      if (options.deleted?.() || (options.startsBetweenReads && !taskSearched))
        return json(response, 200, [null]);
      if (options.paused?.()) {
        return json(response, 200, [
          { id: conversationId, sandbox_id: 'sandbox-1', sandbox_status: 'PAUSED', conversation_url: null },
        ]);
      }
      return json(response, 200, [
        {
          id: conversationId,
          sandbox_id: 'sandbox-1',
          sandbox_status: 'RUNNING',
          execution_status: 'idle',
          conversation_url: `${url}/api/conversations/${dashed}`,
          session_api_key: sessionApiKey,
          created_at: '2026-08-21T18:00:00Z',
          updated_at: '2026-08-21T18:00:00Z',
        },
      ]);
    }
    if (target.pathname === '/api/v1/app-conversations/start-tasks/search') {
      if (!options.startsBetweenReads) return json(response, 200, { items: [], next_page_id: null });
      taskSearched = true;
      const task = {
        id: randomUUID(),
        created_by_user_id: null,
        status: 'READY',
        detail: null,
        app_conversation_id: conversationId,
        sandbox_id: 'sandbox-1',
        agent_server_url: url,
        request: { conversation_id: dashed },
        created_at: '2026-08-21T18:00:00Z',
        updated_at: '2026-08-21T18:00:01Z',
      };
      return json(response, 200, { items: [task], next_page_id: null });
    }
    if (target.pathname === `/api/conversations/${dashed}/events/search`) {
      if (request.headers['x-session-api-key'] !== sessionApiKey)
        return json(response, 401, { detail: 'Unauthorized' });
      let items = [...stored()];
      const since = target.searchParams.get('timestamp__gte');
      if (since !== null) items = items.filter((event) => String(event.timestamp) >= since);
      const pageId = target.searchParams.get('page_id');
      const start =
        pageId === null
          ? 0
          : Math.max(
              0,
              items.findIndex((event) => event.id === pageId),
            );
      const limit = Number(target.searchParams.get('limit') ?? 100);
      const page = items.slice(start, start + limit);
      const next = items[start + limit];
      return json(response, 200, { items: page, next_page_id: next ? next.id : null });
    }
    json(response, 404, { detail: 'Not Found' });
  });

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = new URL(request.url ?? '/', 'http://double');
    const queryKey = target.searchParams.get('session_api_key');
    const headerKey = request.headers['x-session-api-key'];
    const index = handshakes.length;
    handshakes.push({ key: queryKey !== null ? 'query' : headerKey !== undefined ? 'header' : 'none' });
    const script = options.connections[Math.min(index, options.connections.length - 1)] ?? {};
    const presented = queryKey ?? (auth === 'all' && typeof headerKey === 'string' ? headerKey : undefined);
    // Too old for the header and the auth frame: a key only counts in the query, else refused.
    const refusal =
      target.pathname !== `/sockets/events/${dashed}`
        ? 403
        : (script.refuse ??
          ((auth === 'query-only' && queryKey === null) ||
          (presented !== undefined && presented !== sessionApiKey)
            ? 403
            : null));
    if (refusal !== null) {
      socket.end(`HTTP/1.1 ${refusal} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      ws.on('error', () => ws.terminate());
      if (presented !== undefined) run(ws, script);
      else {
        ws.once('message', (data) => {
          double.authFrames++;
          const frame = JSON.parse(String(data)) as { type?: string; session_api_key?: string };
          if (frame.type === 'auth' && frame.session_api_key === sessionApiKey) run(ws, script);
          else ws.close(4001, 'Authentication failed');
        });
      }
    });
  });

  function run(ws: WebSocket, script: ScriptedV1Connection): void {
    if (script.closeWith !== undefined) {
      ws.close(script.closeWith, 'scripted');
      return;
    }
    clock += 1000;
    const connectedAt = new Date(clock).toISOString().replace('Z', '000');
    ws.send(
      JSON.stringify({
        id: randomUUID(),
        timestamp: connectedAt,
        source: 'environment',
        key: 'full_state',
        value: { id: dashed, execution_status: 'running' },
        kind: 'ConversationStateUpdateEvent',
      }),
    );
    for (const frame of script.frames ?? []) ws.send(JSON.stringify(frame));
    if (script.drop) setTimeout(() => ws.terminate(), 20);
  }

  url = await listenOnLoopback(server);
  double.url = url;
  const close = closeOnce(async () => {
    for (const client of wss.clients) client.terminate();
    await stopServer(server);
  });
  double.close = close;
  double[Symbol.asyncDispose] = close;
  return double;
}
