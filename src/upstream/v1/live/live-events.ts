/**
 * The V1 live bridge: agent-server sockets, one per (conversation, caller credential) in a
 * SocketRegistry (../../live/socket-registry.ts, as V0's bridge), shared by every subscriber with
 * that credential and closed `idleCloseMs` after the last one leaves. How one socket connects, reconnects and
 * releases events: conversation-socket.ts; a subscriber's catch-up after a cursor: catch-up.ts; the
 * socket's authentication: agent-socket.ts.
 *
 * Before each (re)connect the conversation is read from the app server with the caller's credential
 * (so a caller reaches only conversations the app server shows them); the socket itself and the
 * catch-up reads go to the agent server with that conversation's `session_api_key`, only at the origin
 * of its `conversation_url` (AgentServerClients, ../agent-servers.ts).
 */

import type { UpstreamCredentials } from '../../credentials.ts';
import { UpstreamError } from '../../failures.ts';
import type { UpstreamClient } from '../../http.ts';
import { SocketRegistry } from '../../live/socket-registry.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { EventPosition } from '../../port/event-cursor.ts';
import type { ConversationEvent } from '../../port/events.ts';
import type { AgentServerClients } from '../agent-servers.ts';
import { findPendingStarts, getConversations } from '../conversations.ts';
import { v1PlaceOf } from '../event-cursor.ts';
import { hexId } from '../ids.ts';
import type { AgentSocketTarget, AuthMode } from './agent-socket.ts';
import { type Resolved, type SocketOwner, V1ConversationSocket } from './conversation-socket.ts';
import { type ResolvedV1LiveOptions, resolveV1LiveOptions, type V1LiveOptions } from './live-options.ts';
import type { AgentScope } from './stored-events.ts';

/** Agent-server origins whose accepted authentication is remembered (a small map, oldest out). */
const MAX_REMEMBERED_ORIGINS = 1024;

/** Counters for tests and metrics: after the last subscriber leaves and idleCloseMs passes, all but `connectionsOpened` are 0. */
export interface V1LiveStats {
  /** Agent-server sockets (shared entries) alive, including ones reconnecting. */
  upstreamSockets: number;
  /** Subscribers attached to any of them. */
  subscribers: number;
  /** Timers held (idle close, reconnect backoff). */
  timers: number;
  /** Socket attempts since start (first connects and reconnects; a query-parameter retry is one). */
  connectionsOpened: number;
}

/** The live bridge of one V1 adapter. */
export class V1LiveEvents implements SocketOwner {
  readonly #client: UpstreamClient;
  readonly #agents: AgentServerClients;
  readonly options: ResolvedV1LiveOptions;
  readonly counters = { timers: 0, connectionsOpened: 0, subscribers: 0 };
  readonly #sockets = new SocketRegistry<V1ConversationSocket>();
  readonly #authModes = new Map<string, AuthMode>();

  /** `client`: the app server's; `agents`: the per-origin agent-server clients of the adapter. */
  constructor(client: UpstreamClient, agents: AgentServerClients, options: V1LiveOptions = {}) {
    this.#client = client;
    this.#agents = agents;
    this.options = resolveV1LiveOptions(options);
  }

  /**
   * The conversation's events for `credentials`: after `after` (stored events first) or live only. An
   * abnormal end is the last item, a {@link BridgeError}, then the stream completes.
   */
  subscribe(
    conversationId: string,
    credentials: UpstreamCredentials,
    after: EventPosition | null,
  ): AsyncIterableIterator<ConversationEvent | BridgeError> {
    const hex = hexId(conversationId);
    // Not a UUID: no V1 conversation has this id.
    if (hex === null) return endedAtOnce(new BridgeError('CONVERSATION_NOT_FOUND'));
    const entry = this.#sockets.socketFor(
      hex,
      credentials,
      (key) => new V1ConversationSocket(this, key, hex, credentials),
    );
    return entry.attach(after === null ? null : v1PlaceOf(after));
  }

  /** Ends every stream of the conversation (whatever the credential) with `error`. */
  endConversation(conversationId: string, error: BridgeError): void {
    const hex = hexId(conversationId);
    if (hex !== null) this.#sockets.endConversation(hex, error);
  }

  stats(): V1LiveStats {
    return {
      upstreamSockets: this.#sockets.size,
      subscribers: this.counters.subscribers,
      timers: this.counters.timers,
      connectionsOpened: this.counters.connectionsOpened,
    };
  }

  /** Ends every stream (they complete) and closes every socket and timer. */
  close(): void {
    this.#sockets.close();
  }

  get timeZone(): string {
    return this.#client.timeZone;
  }

  /** @internal The conversation as the app server shows it to this caller now. */
  async resolve(hex: string, credentials: UpstreamCredentials, signal: AbortSignal): Promise<Resolved> {
    const scope = { client: this.#client, credentials, signal };
    const [found] = await getConversations(scope, [hex]);
    if (found instanceof Error) throw found;
    if (found) return found.agent ? { kind: 'running', target: found.agent } : { kind: 'waiting' };
    // Not a conversation (yet): one whose start task still runs is waited for like a paused sandbox.
    const pending = await findPendingStarts(scope, [hex]).catch((error: unknown) => {
      if (error instanceof UpstreamError && error.code === 'UPSTREAM_ROUTE_MISSING') return null;
      throw error;
    });
    const start = pending?.get(hex);
    return start && start.taskStatus !== 'ERROR' ? { kind: 'waiting' } : { kind: 'gone' };
  }

  /** @internal */
  agentScope(target: AgentSocketTarget, signal: AbortSignal): AgentScope {
    return this.#agents.scopeFor(target, signal);
  }

  /** @internal How this agent server accepted a key last time; the header until then. */
  authModeOf(origin: string): AuthMode {
    return this.#authModes.get(origin) ?? 'header';
  }

  /** @internal */
  rememberAuthMode(origin: string, mode: AuthMode): void {
    this.#authModes.delete(origin);
    this.#authModes.set(origin, mode);
    if (this.#authModes.size > MAX_REMEMBERED_ORIGINS) {
      this.#authModes.delete(this.#authModes.keys().next().value as string);
    }
  }

  /** @internal called by an entry once it is fully closed. */
  forget(key: string, entry: V1ConversationSocket): void {
    this.#sockets.forget(key, entry);
  }
}

/** A stream whose only item is `error`. */
async function* endedAtOnce(error: BridgeError): AsyncIterableIterator<ConversationEvent | BridgeError> {
  yield error;
}
