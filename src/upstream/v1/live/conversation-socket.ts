/**
 * One conversation's shared agent-server WebSocket (one per conversation and caller credential):
 * connect, reconnect with backoff, exactly-once release of what it receives, and the hand-over of each
 * event to its subscribers (src/upstream/live/subscriber-set.ts). A subscriber's own catch-up after
 * a cursor: catch-up.ts. The agent server's socket (agent server v1.43.1 `sockets.py`; docs/upstream-facts.md,
 * "V1: the agent server's event WebSocket") has no sequence numbers,
 * so order is the order the server sends, and duplicates are told apart by event id.
 *
 * - Before every (re)connect the conversation is read from the app server with the caller's own
 *   credential: a deleted conversation is never waited for, a paused sandbox is waited for with the
 *   backoff, and the socket always goes to the current `conversation_url` with the current key.
 * - The first frame is the connect state (`full_state`, or an `execution_status` when the conversation
 *   is not loaded): read for the execution status and the connect time, never delivered (it is not
 *   stored). The socket asks for no replay: a live-only subscriber gets what follows; history comes
 *   from the events search (catch-up.ts), which is the stored order and has every kind.
 * - After a drop (network, agent server restart, sandbox pause and resume) the reconnect holds its live
 *   frames while it reads the stored events after the last one released (or, before any, since the
 *   first connect state's timestamp), then releases the read and the held frames in that order. The
 *   server subscribes the socket before it sends the connect state, and the read starts after that
 *   frame, so every event is in the read, in the held frames, or in both; both is one event (the
 *   recent-id window drops the second). Why the search and not `resend_mode=since`: the search is the
 *   exact stored order with nothing interleaved, every version has it, and it pages; a `since` replay
 *   interleaves with live frames (order across the seam unknown), compares naive local timestamps as
 *   strings, repeats every event of the boundary timestamp, and needs agent server v1.15.0+.
 * - When the agent server stays unreachable (or the sandbox stays paused) through
 *   `reconnect.maxAttempts`, every subscriber ends with CONVERSATION_UNREACHABLE (CONVERSATION_STOPPED).
 */
import type { WebSocket } from 'ws';
import type { UpstreamCredentials } from '../../credentials.ts';
import { UpstreamError } from '../../failures.ts';
import { IdleClose } from '../../live/idle-close.ts';
import { ReconnectSchedule } from '../../live/reconnect-schedule.ts';
import { Subscriber, type SubscriberOwner } from '../../live/subscriber-queue.ts';
import { SubscriberSet } from '../../live/subscriber-set.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import { ConversationNotFoundError } from '../../port/errors.ts';
import { BEFORE_FIRST_CURSOR, type V1EventPlace } from '../event-cursor.ts';
import { mapV1Event, placeOf } from '../events.ts';
import { type AgentSocketTarget, type AuthMode, type OpenOutcome, openAgentSocket } from './agent-socket.ts';
import { catchUp } from './catch-up.ts';
import type { ResolvedV1LiveOptions } from './live-options.ts';
import { RecentIds } from './recent-ids.ts';
import { type AgentScope, AnchorLost, type CatchUpStart, readStoredEvents } from './stored-events.ts';

/** What the app server says about the conversation before a (re)connect. */
export type Resolved =
  | { kind: 'running'; target: AgentSocketTarget }
  | { kind: 'waiting' }
  | { kind: 'gone' };

/** What a shared socket needs from the registry that holds it (live-events.ts). */
export interface SocketOwner {
  readonly counters: { timers: number; connectionsOpened: number; subscribers: number };
  readonly options: ResolvedV1LiveOptions;
  readonly timeZone: string;
  resolve(conversationId: string, credentials: UpstreamCredentials, signal: AbortSignal): Promise<Resolved>;
  agentScope(target: AgentSocketTarget, signal: AbortSignal): AgentScope;
  authModeOf(origin: string): AuthMode;
  rememberAuthMode(origin: string, mode: AuthMode): void;
  forget(key: string, entry: V1ConversationSocket): void;
}

export class V1ConversationSocket implements SubscriberOwner {
  readonly #owner: SocketOwner;
  readonly #key: string;
  /** 32 hex. */
  readonly conversationId: string;
  readonly #credentials: UpstreamCredentials;
  readonly #subscribers: SubscriberSet;
  readonly #reconnect: ReconnectSchedule;
  readonly #idle: IdleClose;
  #state: 'connecting' | 'catching-up' | 'open' | 'waiting' | 'closed' = 'connecting';
  #socket: WebSocket | null = null;
  #target: AgentSocketTarget | null = null;
  #everOpened = false;
  #abort: AbortController | null = null;
  #ping: NodeJS.Timeout | null = null;
  #readyWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  /** Frames a reconnect holds while it reads what was stored during the drop. */
  #held: unknown[] | null = null;
  /** The first connect state's timestamp: where a reconnect reads from before any event was released. */
  #connectedSince: string | null = null;
  /** The last stored event released: where a reconnect reads from, and the place of an id-less event. */
  #last: V1EventPlace | null = null;
  #lastCursor = BEFORE_FIRST_CURSOR;
  readonly #recent: RecentIds;
  /** Events released so far (catch-up.ts counts what a subscriber's read already covers). */
  released = 0;
  /** The conversation's execution status, from the connect state and its updates. */
  executionStatus: string | null = null;

  constructor(owner: SocketOwner, key: string, conversationId: string, credentials: UpstreamCredentials) {
    this.#owner = owner;
    this.#key = key;
    this.conversationId = conversationId;
    this.#credentials = credentials;
    const { options } = owner;
    this.#recent = new RecentIds(options.historySize);
    this.#subscribers = new SubscriberSet(owner.counters);
    this.#reconnect = new ReconnectSchedule(options.reconnect, owner.counters);
    this.#idle = new IdleClose(
      options.idleCloseMs,
      owner.counters,
      () => this.#state !== 'closed' && this.#subscribers.size === 0,
      () => this.#end(null),
    );
    void this.#connect();
  }

  /** A new subscriber: live only, or after `after` (its catch-up is read once the socket is live). */
  attach(after: V1EventPlace | null): Subscriber {
    this.#idle.cancel();
    const subscriber = new Subscriber(this, this.#owner.options.maxBufferedEvents);
    this.#subscribers.add(subscriber);
    if (after === null) {
      // The live groups of src/gateway/websocket/live-fan-out.ts share subscribers of the same stream.
      subscriber.liveStream = this;
      return subscriber;
    }
    subscriber.startCatchUp(-1);
    void catchUp(this, subscriber, after, this.released);
    return subscriber;
  }

  detach(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber)) return;
    this.#idle.arm();
  }

  /** Resolves once live frames flow (a reconnect's gap filled); rejects when the socket ends first. */
  ready(): Promise<void> {
    if (this.#state === 'open') return Promise.resolve();
    if (this.#isClosed()) return Promise.reject(new BridgeError('CONVERSATION_UNREACHABLE'));
    return new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  /** The scope of calls to the agent server the socket is connected to (after `ready()`). */
  agentScope(signal: AbortSignal): AgentScope | null {
    return this.#target === null ? null : this.#owner.agentScope(this.#target, signal);
  }

  get timeZone(): string {
    return this.#owner.timeZone;
  }

  /** Ends subscribers with `error` (this gateway deleted or stopped the conversation). */
  endWith(error: BridgeError): void {
    this.#end(error);
  }

  /** Gateway shutdown: streams complete normally. */
  shutdown(): void {
    this.#end(null);
  }

  #isClosed(): boolean {
    return this.#state === 'closed';
  }

  async #connect(): Promise<void> {
    if (this.#isClosed()) return;
    this.#state = 'connecting';
    const abort = new AbortController();
    this.#abort = abort;
    let resolved: Resolved;
    try {
      resolved = await this.#owner.resolve(this.conversationId, this.#credentials, abort.signal);
    } catch (error) {
      if (this.#isClosed()) return;
      if (isRefusedKey(error)) this.#end(new BridgeError('UNAUTHENTICATED'));
      else this.#retryLater('unreachable');
      return;
    } finally {
      if (this.#abort === abort) this.#abort = null;
    }
    if (this.#isClosed()) return;
    if (resolved.kind === 'gone') {
      this.#end(new BridgeError(this.#everOpened ? 'CONVERSATION_DELETED' : 'CONVERSATION_NOT_FOUND'));
      return;
    }
    if (resolved.kind === 'waiting') {
      this.#retryLater('stopped');
      return;
    }
    const { target } = resolved;
    this.#target = target;
    const origin = new URL(target.conversationUrl).origin;
    this.#owner.counters.connectionsOpened++;
    const outcome = await openAgentSocket(target, this.conversationId, this.#owner.authModeOf(origin), {
      connectTimeoutMs: this.#owner.options.connectTimeoutMs,
      authProbeMs: this.#owner.options.authProbeMs,
    });
    if (this.#isClosed()) {
      if (outcome.kind === 'open') outcome.socket.terminate();
      return;
    }
    if (outcome.kind === 'open') {
      this.#owner.rememberAuthMode(origin, outcome.mode);
      this.#opened(outcome);
      return;
    }
    const refusal = refusalOf(outcome, this.#everOpened);
    if (refusal) this.#end(refusal);
    else this.#retryLater('unreachable');
  }

  #opened(outcome: Extract<OpenOutcome, { kind: 'open' }>): void {
    const { socket } = outcome;
    this.#socket = socket;
    const state = connectState(outcome.first);
    if (state.executionStatus !== null) this.executionStatus = state.executionStatus;
    socket.on('close', () => this.#dropped(socket));
    this.#keepAlive(socket);
    if (!this.#everOpened) {
      this.#connectedSince = state.timestamp;
      outcome.listen((frame) => this.#onFrame(frame));
      this.#live();
      return;
    }
    this.#state = 'catching-up';
    const held: unknown[] = [];
    this.#held = held;
    outcome.listen((frame) => {
      if (this.#held !== held) this.#onFrame(frame);
      else if (held.length < this.#owner.options.historySize) held.push(frame);
      // A gap read slower than a whole window of live frames: this connection is dropped and retried.
      else this.#dropped(socket);
    });
    void this.#fillGap(socket, held);
  }

  /** A reconnect: the stored events since the last release, then the frames held meanwhile. */
  async #fillGap(socket: WebSocket, held: unknown[]): Promise<void> {
    const start: CatchUpStart | null =
      this.#last !== null
        ? { after: this.#last }
        : this.#connectedSince !== null
          ? { since: this.#connectedSince }
          : null;
    if (start !== null) {
      const abort = new AbortController();
      this.#abort = abort;
      let stored: unknown[];
      try {
        const { scope, basePath } = this.#owner.agentScope(this.#target as AgentSocketTarget, abort.signal);
        stored = await readStoredEvents(scope, basePath, this.conversationId, start);
      } catch (error) {
        if (this.#socket !== socket || this.#isClosed()) return;
        if (error instanceof ConversationNotFoundError) this.#end(new BridgeError('CONVERSATION_DELETED'));
        else if (error instanceof AnchorLost) this.#end(historyChanged());
        else if (isRefusedKey(error)) this.#end(new BridgeError('UNAUTHENTICATED'));
        else this.#dropped(socket);
        return;
      } finally {
        if (this.#abort === abort) this.#abort = null;
      }
      if (this.#socket !== socket || this.#isClosed()) return;
      for (const frame of stored) this.#onFrame(frame);
    }
    this.#held = null;
    for (const frame of held) this.#onFrame(frame);
    this.#live();
  }

  #live(): void {
    this.#state = 'open';
    this.#everOpened = true;
    this.#reconnect.succeeded();
    const waiters = this.#readyWaiters;
    this.#readyWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  /** One frame (or stored event), in final order: mapped once, dropped when its id was released. */
  #onFrame(frame: unknown): void {
    const place = placeOf(frame);
    if (place !== null) {
      if (this.#recent.has(place.id)) return;
    }
    const event = mapV1Event(frame, this.#owner.timeZone, this.#lastCursor);
    if (event === null) return;
    if (place !== null) {
      this.#recent.add(place.id);
      this.#last = place;
      this.#lastCursor = event.cursor;
    }
    if (event.kind === 'AGENT_STATE_CHANGED') this.executionStatus = event.stateRaw;
    this.released++;
    this.#subscribers.offer(event);
  }

  /** Pings the open socket; one that has not answered the previous ping is dropped. */
  #keepAlive(socket: WebSocket): void {
    let answered = true;
    socket.on('pong', () => {
      answered = true;
    });
    this.#stopPing();
    this.#ping = setInterval(() => {
      if (!answered) {
        this.#dropped(socket);
        return;
      }
      answered = false;
      socket.ping();
    }, this.#owner.options.pingIntervalMs);
    this.#ping.unref();
  }

  #stopPing(): void {
    if (this.#ping) clearInterval(this.#ping);
    this.#ping = null;
  }

  /** The socket went away (or is given up): reconnect unless it was closed on purpose. */
  #dropped(socket: WebSocket): void {
    if (this.#socket !== socket || this.#isClosed()) return;
    this.#closeSocket();
    this.#retryLater('unreachable');
  }

  #closeSocket(): void {
    this.#stopPing();
    this.#held = null;
    const socket = this.#socket;
    this.#socket = null;
    if (!socket) return;
    socket.removeAllListeners('close');
    socket.removeAllListeners('message');
    socket.terminate();
  }

  #retryLater(failure: 'unreachable' | 'stopped'): void {
    this.#state = 'waiting';
    if (!this.#reconnect.retry(() => void this.#connect())) {
      this.#end(
        failure === 'stopped'
          ? new BridgeError(
              'CONVERSATION_STOPPED',
              "The conversation's sandbox is not running; startConversation resumes it.",
            )
          : new BridgeError('CONVERSATION_UNREACHABLE', "The conversation's agent server cannot be reached."),
      );
    }
  }

  /** Closes the socket and every timer; subscribers end with `error` (or complete when null). */
  #end(error: BridgeError | null): void {
    if (this.#isClosed()) return;
    this.#state = 'closed';
    this.#owner.forget(this.#key, this);
    this.#idle.cancel();
    this.#reconnect.cancel();
    this.#abort?.abort();
    this.#closeSocket();
    const failure = error ?? new BridgeError('CONVERSATION_UNREACHABLE', 'The conversation socket closed.');
    for (const waiter of this.#readyWaiters) waiter.reject(failure);
    this.#readyWaiters = [];
    this.#subscribers.end(error);
  }
}

/** The connect state's execution status and timestamp (naive server-local, as the server wrote it). */
function connectState(first: unknown): { executionStatus: string | null; timestamp: string | null } {
  if (typeof first !== 'object' || first === null) return { executionStatus: null, timestamp: null };
  const frame = first as { key?: unknown; value?: unknown; timestamp?: unknown };
  const value = frame.value as { execution_status?: unknown } | undefined;
  const status =
    frame.key === 'full_state' ? value?.execution_status : frame.key === 'execution_status' ? value : null;
  return {
    executionStatus: typeof status === 'string' ? status : null,
    timestamp: typeof frame.timestamp === 'string' ? frame.timestamp : null,
  };
}

/** A handshake or close that ends the streams (the rest is retried): the socket's refusals (403, 4001, 4004, 1013). */
function refusalOf(outcome: OpenOutcome, everOpened: boolean): BridgeError | null {
  if (outcome.kind === 'refused') return outcome.status === 403 ? new BridgeError('UNAUTHENTICATED') : null;
  if (outcome.kind !== 'closed') return null;
  switch (outcome.code) {
    case 4001:
      return new BridgeError('UNAUTHENTICATED');
    case 4004:
      return new BridgeError(everOpened ? 'CONVERSATION_DELETED' : 'CONVERSATION_NOT_FOUND');
    case 1013:
      return new BridgeError('UPSTREAM_TOO_MANY_CONNECTIONS');
    default:
      return null;
  }
}

function isRefusedKey(error: unknown): boolean {
  return error instanceof UpstreamError && (error.code === 'UNAUTHENTICATED' || error.code === 'FORBIDDEN');
}

function historyChanged(): BridgeError {
  return new BridgeError(
    'CONVERSATION_UNREACHABLE',
    "The conversation's stored history no longer holds the last event delivered; subscribe again.",
  );
}
