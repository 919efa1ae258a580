/**
 * The event WebSocket of one agent server, `/sockets/events/{conversation_id}`, as agent server
 * v1.43.1 serves it (OpenHands/software-agent-sdk `openhands-agent-server/openhands/agent_server/
 * sockets.py`; docs/upstream-facts.md, "V1: the agent server's event WebSocket"), on the `ws` package:
 *
 * - Refused before accept (the client sees HTTP 403): a path or query that does not validate (a
 *   non-UUID id, `resend_mode=x`, a bad `after_timestamp` or `resend_all`), and a key presented in the
 *   query (`session_api_key`, checked first) or the `X-Session-API-Key` header that is wrong.
 * - Accepted without a key: the first text frame within 10 s must be `{"type":"auth","session_api_key"}`
 *   with the right key, else close 4001 `Authentication failed`. Nothing confirms success.
 * - After auth: unknown conversation (in this sandbox) close 4004; 50 subscribers already close 1013.
 * - Frames: `full_state` first (fresh id, never stored), then the replay (`resend_mode=all`, or `since`
 *   with `after_timestamp`, inclusive; `resend_all=true` means all), then live events. Subscribing and
 *   replaying happen in one synchronous turn, so nothing is lost or sent twice at the seam.
 * - Client frames: a `Message` runs the agent; a repeated auth frame is ignored; anything else earns a
 *   `ServerErrorEvent` frame and the socket stays open.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type pino from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import { SOCKET_CLOSE } from '../../contract/v1/agent-server.ts';
import type { SdkEventRecord } from '../../contract/v1/events.ts';
import type { V1Agent } from './agent.ts';
import { fullState, uuidHex } from './conversation-state.ts';
import { serverErrorEvent, stateUpdate } from './event-factory.ts';
import { readMessage } from './message-body.ts';
import { parseDatetime } from './query.ts';
import type { V1Store } from './store.ts';

/** Subscribers per conversation before close 1013 (v1.22.1+). */
const SUBSCRIBER_CAP = 50;
/** How long a socket accepted without a key may take to send its auth frame. */
const AUTH_FRAME_TIMEOUT_MS = 10_000;

const PATH = /^\/sockets\/events\/([^/]+)$/;
const TRUE_WORDS = ['1', 'on', 't', 'true', 'y', 'yes'];
const FALSE_WORDS = ['0', 'off', 'f', 'false', 'n', 'no'];

/** What the socket of one agent server needs. */
export interface EventSocketDeps {
  sandboxId: string;
  tenant: string;
  /** The sandbox's key, compared in constant time by `keyMatches`. */
  keyMatches: (presented: string) => boolean;
  store: V1Store;
  agent: V1Agent;
  logger: pino.Logger;
  /** @default 10000 */
  authTimeoutMs?: number;
}

/** How the socket replays stored events after `full_state`. */
type Replay = { mode: 'none' } | { mode: 'all' } | { mode: 'since'; after: string | null };

/** The validated handshake, or undefined when FastAPI would refuse it. */
function parseHandshake(url: URL): { hex: string; replay: Replay } | undefined {
  const path = PATH.exec(url.pathname);
  const hex = path?.[1] === undefined ? undefined : uuidHex(decodeURIComponent(path[1]));
  if (hex === undefined) return undefined;
  const q = url.searchParams;
  const mode = q.get('resend_mode');
  if (mode !== null && mode !== 'all' && mode !== 'since') return undefined;
  const afterText = q.get('after_timestamp');
  const after = afterText === null ? null : parseDatetime(afterText);
  if (after === undefined) return undefined;
  const resendAllText = q.get('resend_all')?.toLowerCase();
  if (resendAllText !== undefined && ![...TRUE_WORDS, ...FALSE_WORDS].includes(resendAllText))
    return undefined;
  const resendAll = resendAllText !== undefined && TRUE_WORDS.includes(resendAllText);
  if (mode === 'all' || (mode === null && resendAll)) return { hex, replay: { mode: 'all' } };
  if (mode === 'since') {
    return {
      hex,
      replay: { mode: 'since', after: after ? after.localText : null },
    };
  }
  return { hex, replay: { mode: 'none' } };
}

/** Refuses an upgrade before accepting it, as uvicorn answers a close sent before accept. */
function refuse(socket: Duplex): void {
  socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
}

function isExactAuthFrame(value: unknown): value is { type: 'auth'; session_api_key: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value).sort();
  return (
    keys.length === 2 &&
    keys[0] === 'session_api_key' &&
    keys[1] === 'type' &&
    (value as { type: unknown }).type === 'auth'
  );
}

/** Attaches the event socket to an agent server's upgrade requests; `close()` drops every socket. */
export function createEventSocket(deps: EventSocketDeps) {
  const { store, agent, logger, tenant } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const subscribers = new Map<string, number>();

  /** After auth: the conversation, the cap, then full_state, replay and live events. */
  function admit(ws: WebSocket, hex: string, replay: Replay): void {
    const conversation = store.getConversation(tenant, hex);
    if (!conversation || conversation.sandboxId !== deps.sandboxId) {
      ws.close(SOCKET_CLOSE.conversationNotFound.code, SOCKET_CLOSE.conversationNotFound.reason);
      return;
    }
    const count = subscribers.get(hex) ?? 0;
    if (count >= SUBSCRIBER_CAP) {
      ws.close(SOCKET_CLOSE.tooManyConnections.code, SOCKET_CLOSE.tooManyConnections.reason);
      return;
    }
    subscribers.set(hex, count + 1);
    const send = (event: SdkEventRecord) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
    };
    send(stateUpdate('full_state', fullState(conversation)));
    // One synchronous turn: subscribe, then replay what is stored; an event appended later is live.
    const unsubscribe = agent.onEvent(tenant, hex, send);
    if (replay.mode === 'all') for (const event of store.listEvents(hex, noFilter)) send(event);
    if (replay.mode === 'since' && replay.after !== null) {
      for (const event of store.listEvents(hex, { ...noFilter, timestampGte: replay.after })) send(event);
    }
    // Deleted, or its sandbox paused: the connection drops as when the agent server goes away.
    const stopWatching = agent.onRemoved(tenant, hex, () => ws.terminate());
    ws.on('close', () => {
      unsubscribe();
      stopWatching();
      const left = (subscribers.get(hex) ?? 1) - 1;
      if (left > 0) subscribers.set(hex, left);
      else subscribers.delete(hex);
    });
    ws.on('message', (data, isBinary) => {
      let frame: unknown;
      try {
        frame = JSON.parse(isBinary ? '' : data.toString('utf8'));
      } catch (error) {
        send(serverErrorEvent('JSONDecodeError', error instanceof Error ? error.message : 'invalid JSON'));
        return;
      }
      if (isExactAuthFrame(frame)) return;
      const message = readMessage(frame, [], { runDefault: true });
      if (!message.ok) {
        const detail = message.issues.map((i) => `${i.loc.join('.') || 'message'}: ${i.msg}`).join('; ');
        send(serverErrorEvent('ValidationError', detail));
        return;
      }
      try {
        // Extra keys such as `run` are ignored: a socket message always runs the agent.
        agent.send(tenant, hex, message.value.content, true);
      } catch (error) {
        logger.error({ err: error }, 'socket message failed');
        send(serverErrorEvent('RuntimeError', 'could not accept the message'));
      }
    });
  }

  /** No key came with the handshake: wait for the auth frame. */
  function awaitAuthFrame(ws: WebSocket, hex: string, replay: Replay): void {
    const fail = () =>
      ws.close(SOCKET_CLOSE.authenticationFailed.code, SOCKET_CLOSE.authenticationFailed.reason);
    const timer = setTimeout(fail, deps.authTimeoutMs ?? AUTH_FRAME_TIMEOUT_MS);
    ws.once('message', (data, isBinary) => {
      clearTimeout(timer);
      let frame: unknown;
      try {
        frame = isBinary ? undefined : JSON.parse(data.toString('utf8'));
      } catch {
        frame = undefined;
      }
      const record = frame as { type?: unknown; session_api_key?: unknown } | undefined;
      const key = record?.type === 'auth' ? record.session_api_key : undefined;
      if (typeof key !== 'string' || !deps.keyMatches(key)) fail();
      else admit(ws, hex, replay);
    });
    ws.once('close', () => clearTimeout(timer));
  }

  return {
    /** Handles one upgrade request of the agent server's HTTP server. */
    upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
      let url: URL;
      try {
        url = new URL(request.url ?? '/', 'http://local');
      } catch {
        refuse(socket);
        return;
      }
      const handshake = parseHandshake(url);
      if (!handshake) {
        refuse(socket);
        return;
      }
      const header = request.headers['x-session-api-key'];
      const presented =
        url.searchParams.get('session_api_key') ?? (Array.isArray(header) ? header[0] : header);
      if (presented !== undefined && !deps.keyMatches(presented)) {
        refuse(socket);
        return;
      }
      wss.handleUpgrade(request, socket, head, (ws) => {
        ws.on('error', () => ws.terminate());
        if (presented !== undefined) admit(ws, handshake.hex, handshake.replay);
        else awaitAuthFrame(ws, handshake.hex, handshake.replay);
      });
    },
    /**
     * Drops every socket (the listener is going away). The WebSocketServer itself stays usable: a
     * resumed sandbox accepts sockets again (a closed one would answer every upgrade 503).
     */
    close(): void {
      for (const ws of wss.clients) ws.terminate();
    },
  };
}

const noFilter = { kind: null, source: null, timestampGte: null, timestampLt: null };
