/**
 * V1's side of one shared socket (the live core's shared-socket.ts runs it, one per conversation and
 * caller credential): each connection is the conversation's event WebSocket on its agent server
 * (socket-handshake.ts; agent server v1.43.1 `sockets.py`; docs/upstream-facts.md, "V1: the agent
 * server's event WebSocket"), whose frames are mapped once (../events.ts).
 *
 * - Before every (re)connect the conversation is read from the app server with the caller's own
 *   credential: a deleted conversation is never waited for, a paused sandbox is waited for with the
 *   backoff, and the socket always goes to the current `conversation_url` with the current key.
 * - The first frame is the connect state (`full_state`, or an `execution_status` when the conversation
 *   is not loaded): read for the connect time, never delivered (it is not stored). The socket asks for
 *   no replay: a live-only subscriber gets what follows; history comes from the events search
 *   (catch-up.ts), which is the stored order and has every kind.
 * - A reconnect's gap is read from the events search after the last event released (or, before any,
 *   since the first connect state's timestamp). The server subscribes the socket before it sends the
 *   connect state, and the read starts after that frame, so every event is in the read, in the frames
 *   held meanwhile, or in both (one event: event-order.ts). Why the search and not
 *   `resend_mode=since`: the search is the exact stored order with nothing interleaved, every version
 *   has it, and it pages; a `since` replay interleaves with live frames (order across the seam
 *   unknown), compares naive local timestamps as strings, repeats every event of the boundary
 *   timestamp, and needs agent server v1.15.0+.
 * - Open sockets are pinged every `pingIntervalMs`: the agent server sends nothing while the agent is
 *   idle, so a dead connection would otherwise go unnoticed.
 */
import type { WebSocket } from 'ws';
import { isRefusedKey } from '../../live/catch-up.ts';
import type { ConnectOutcome, LiveConnection, SocketDriver, SocketHandle } from '../../live/live-adapter.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { ConversationEvent } from '../../port/events.ts';
import type { V1EventPlace } from '../event-cursor.ts';
import { mapV1Event } from '../events.ts';
import type { AgentScope } from '../stored-events.ts';
import { type ReadSource, readAfter, readGap } from './catch-up.ts';
import type { ResolvedV1LiveOptions } from './live-options.ts';
import {
  type AgentSocketTarget,
  type AuthMode,
  type OpenOutcome,
  openAgentSocket,
} from './socket-handshake.ts';

/** What the app server says about the conversation before a (re)connect. */
export type Resolved =
  | { kind: 'running'; target: AgentSocketTarget }
  | { kind: 'waiting' }
  | { kind: 'gone' };

/** What every V1 socket shares (live-events.ts builds it once per adapter). */
export interface V1Live {
  readonly options: ResolvedV1LiveOptions;
  readonly timeZone: string;
  resolve(
    conversationId: string,
    credentials: SocketHandle['credentials'],
    signal: AbortSignal,
  ): Promise<Resolved>;
  agentScope(target: AgentSocketTarget, signal: AbortSignal): AgentScope;
  authModeOf(origin: string): AuthMode;
  rememberAuthMode(origin: string, mode: AuthMode): void;
}

export class V1ConversationSocket implements SocketDriver<V1EventPlace> {
  readonly #socket: SocketHandle;
  readonly #live: V1Live;
  readonly #reads: ReadSource;
  #target: AgentSocketTarget | null = null;
  /** The first connect state's timestamp: where a reconnect reads from before any event was released. */
  #connectedSince: string | null = null;

  constructor(socket: SocketHandle, live: V1Live) {
    this.#socket = socket;
    this.#live = live;
    this.#reads = {
      conversationId: socket.conversationId,
      timeZone: live.timeZone,
      agentScope: (signal) => (this.#target === null ? null : live.agentScope(this.#target, signal)),
    };
  }

  async connect(
    everOpened: boolean,
    _last: V1EventPlace | null,
    signal: AbortSignal,
  ): Promise<ConnectOutcome> {
    const { conversationId, credentials } = this.#socket;
    let resolved: Resolved;
    try {
      resolved = await this.#live.resolve(conversationId, credentials, signal);
    } catch (error) {
      return isRefusedKey(error)
        ? { kind: 'refused', error: new BridgeError('UNAUTHENTICATED') }
        : { kind: 'retry' };
    }
    if (resolved.kind === 'gone') return { kind: 'gone' };
    if (resolved.kind === 'waiting') return { kind: 'retry', giveUp: sandboxNotRunning() };
    const { target } = resolved;
    this.#target = target;
    const origin = new URL(target.conversationUrl).origin;
    this.#socket.counters.connectionsOpened++;
    const { connectTimeoutMs, authProbeMs } = this.#live.options;
    const outcome = await openAgentSocket(target, conversationId, this.#live.authModeOf(origin), {
      connectTimeoutMs,
      authProbeMs,
    });
    if (outcome.kind === 'open') {
      this.#live.rememberAuthMode(origin, outcome.mode);
      if (!everOpened) this.#connectedSince = connectTimestamp(outcome.first);
      return { kind: 'open', connection: this.#connection(outcome) };
    }
    return refusalOf(outcome);
  }

  /** The open socket as the core's connection: its frames mapped, kept alive by pings. */
  #connection(outcome: Extract<OpenOutcome, { kind: 'open' }>): LiveConnection {
    const { socket } = outcome;
    const timeZone = this.#live.timeZone;
    const { pingIntervalMs } = this.#live.options;
    let ping: NodeJS.Timeout | undefined;
    return {
      replayed: [],
      listen(deliver, dropped) {
        socket.on('close', dropped);
        ping = keepAlive(socket, pingIntervalMs, dropped);
        outcome.listen((frame) => {
          const event = mapV1Event(frame, timeZone);
          if (event !== null) deliver(event);
        });
      },
      close() {
        clearInterval(ping);
        socket.removeAllListeners('close');
        socket.removeAllListeners('message');
        socket.terminate();
      },
    };
  }

  readGap(last: V1EventPlace | null, signal: AbortSignal): Promise<ConversationEvent[]> | null {
    return readGap(this.#reads, last, this.#connectedSince, signal);
  }

  readAfter(after: V1EventPlace, signal: AbortSignal): Promise<ConversationEvent[]> {
    return readAfter(this.#reads, after, signal);
  }
}

/** Pings `socket` every `intervalMs`; one that has not answered the previous ping is `dropped`. */
function keepAlive(socket: WebSocket, intervalMs: number, dropped: () => void): NodeJS.Timeout {
  let answered = true;
  socket.on('pong', () => {
    answered = true;
  });
  const ping = setInterval(() => {
    if (!answered) {
      dropped();
      return;
    }
    answered = false;
    socket.ping();
  }, intervalMs);
  ping.unref();
  return ping;
}

/** The connect state's timestamp (naive server-local, as the server wrote it). */
function connectTimestamp(first: unknown): string | null {
  if (typeof first !== 'object' || first === null) return null;
  const { timestamp } = first as { timestamp?: unknown };
  return typeof timestamp === 'string' ? timestamp : null;
}

/** A handshake or close that ends the streams, or a retry (the socket's refusals: socket-handshake.ts). */
function refusalOf(outcome: Exclude<OpenOutcome, { kind: 'open' }>): ConnectOutcome {
  if (outcome.kind === 'refused' && outcome.status === 403) {
    return { kind: 'refused', error: new BridgeError('UNAUTHENTICATED') };
  }
  if (outcome.kind !== 'closed') return { kind: 'retry' };
  switch (outcome.code) {
    case 4001:
      return { kind: 'refused', error: new BridgeError('UNAUTHENTICATED') };
    case 4004:
      return { kind: 'gone' };
    case 1013:
      return { kind: 'refused', error: new BridgeError('UPSTREAM_TOO_MANY_CONNECTIONS') };
    default:
      return { kind: 'retry' };
  }
}

/** What the streams end with when a paused sandbox stays paused through every attempt. */
function sandboxNotRunning(): BridgeError {
  return new BridgeError(
    'CONVERSATION_STOPPED',
    "The conversation's sandbox is not running; startConversation resumes it.",
  );
}
