/**
 * V0's side of one shared socket (the live core's shared-socket.ts runs it, one per conversation and
 * credential): each connection is a Socket.IO socket to the conversation (socket-handshake.ts) whose
 * events are mapped once (../events.ts); beside it the actions waiting for their echo (action-echo.ts),
 * the recent events kept for catch-ups without the stored events route (recent-events.ts), and the
 * upstream's session close.
 *
 * - A connection asks for the stored events after the highest id released (`latest_event_id`, -1 at
 *   first): the upstream replays them before its connect acknowledgement (socket.io-client buffers
 *   them and emits them just before `connect`), then live events follow. The replay is the
 *   connection's `replayed` batch, released sorted by id (event-order.ts: the upstream sends the
 *   held-back agent-state change after higher ids).
 * - The replay is not the history: it leaves out every agent-state change but the last. A reconnect's
 *   gap and a subscriber's catch-up are read from the stored events route (catch-up.ts).
 * - Before every (re)connect the conversation is read over REST (../socket-target.ts): the handshake
 *   would re-create a deleted one.
 * - The upstream's session close (the id-less `agent_state_changed: stopped`) is delivered, then one
 *   REST read tells a delete from a stop and the streams end with CONVERSATION_DELETED or
 *   CONVERSATION_STOPPED instead of idling or reconnecting.
 */
import { GraphQLError } from 'graphql';
import type { Socket } from 'socket.io-client';
import { SOCKET_EVENT, type UserActionRecord } from '../../../contract/v0/records.ts';
import type { ConnectOutcome, LiveConnection, SocketDriver, SocketHandle } from '../../live/live-adapter.ts';
import { BridgeError } from '../../port/bridge-error.ts';
import type { ConversationEvent } from '../../port/events.ts';
import { mapUpstreamEvent } from '../events.ts';
import { ConversationNotFound, type SocketTarget, type SocketTargetResolver } from '../socket-target.ts';
import { EchoWaiters } from './action-echo.ts';
import { type ReadSource, readAfter, readGap, type StoredEventsRoute } from './catch-up.ts';
import type { ResolvedV0LiveOptions } from './live-options.ts';
import { RecentEvents } from './recent-events.ts';
import { isRefusal, openSocket, refusalToError } from './socket-handshake.ts';

/** What every V0 socket shares (live-events.ts builds it once per adapter). */
export interface V0Live {
  readonly options: ResolvedV0LiveOptions;
  readonly resolveTarget: SocketTargetResolver;
  readonly route: StoredEventsRoute;
  readonly timeZone: string;
}

export class V0ConversationSocket implements SocketDriver<number> {
  readonly #socket: SocketHandle;
  readonly #live: V0Live;
  readonly #echoes: EchoWaiters;
  readonly #reads: ReadSource;
  /** The open Socket.IO connection, where actions are emitted. */
  #io: Socket | null = null;

  constructor(socket: SocketHandle, live: V0Live) {
    this.#socket = socket;
    this.#live = live;
    this.#echoes = new EchoWaiters(socket.counters);
    this.#reads = {
      conversationId: socket.conversationId,
      credentials: socket.credentials,
      counters: socket.counters,
      timeZone: live.timeZone,
      connectTimeoutMs: live.options.connectTimeoutMs,
      resolveTarget: live.resolveTarget,
      route: live.route,
      // Kept only while the upstream has no events route: with it they would be memory for nothing.
      recent: new RecentEvents(live.options.historySize, () => live.route.reader === null),
    };
  }

  async connect(everOpened: boolean, last: number | null, signal: AbortSignal): Promise<ConnectOutcome> {
    const { conversationId, credentials } = this.#socket;
    let target: SocketTarget;
    try {
      target = await this.#live.resolveTarget(conversationId, credentials, signal);
    } catch (error) {
      // Gone after having been open (the upstream's `io server disconnect` on delete) means deleted.
      if (error instanceof ConversationNotFound) return { kind: 'gone' };
      if (error instanceof GraphQLError && error.extensions.code === 'UNAUTHENTICATED') {
        return { kind: 'refused', error: new BridgeError('UNAUTHENTICATED') };
      }
      return { kind: 'retry' };
    }
    if (signal.aborted) return { kind: 'retry' };
    this.#socket.counters.connectionsOpened++;
    const { connectTimeoutMs } = this.#live.options;
    return this.#handshake(
      openSocket(target, conversationId, last ?? -1, connectTimeoutMs),
      everOpened,
      signal,
    );
  }

  /** Waits for the connection's acknowledgement: everything before it is its replay. */
  #handshake(io: Socket, everOpened: boolean, signal: AbortSignal): Promise<ConnectOutcome> {
    return new Promise((resolve) => {
      const replayed: ConversationEvent[] = [];
      const early: ConversationEvent[] = [];
      let acknowledged = false;
      let lost = false;
      let deliver: ((event: ConversationEvent) => void) | null = null;
      let dropped: (() => void) | null = null;
      const close = () => {
        io.removeAllListeners();
        io.disconnect();
        if (this.#io === io) this.#io = null;
      };
      const abandon = () => {
        close();
        resolve({ kind: 'retry' });
      };
      signal.addEventListener('abort', abandon, { once: true });
      io.on(SOCKET_EVENT.serverEvent, (payload: unknown) => {
        const event = mapUpstreamEvent(payload, this.#live.timeZone);
        if (!event) return;
        if (!acknowledged) replayed.push(event);
        else if (deliver) deliver(event);
        else early.push(event);
      });
      io.on('connect', () => {
        acknowledged = true;
        signal.removeEventListener('abort', abandon);
        this.#io = io;
        const connection: LiveConnection = {
          replayed,
          listen(onEvent, onDrop) {
            deliver = onEvent;
            dropped = onDrop;
            for (const event of early.splice(0)) onEvent(event);
            if (lost) onDrop();
          },
          close,
        };
        resolve({ kind: 'open', connection });
      });
      io.on('connect_error', (error: Error & { type?: string; data?: unknown }) => {
        signal.removeEventListener('abort', abandon);
        close();
        if (isRefusal(error)) {
          const mapped = refusalToError(error.message);
          // A refused key or a refusal of the very first attempt is final; after a drop a refusal can
          // be the upstream still starting up, so it is retried like a transport failure.
          if (mapped.code === 'UNAUTHENTICATED' || !everOpened) {
            resolve({ kind: 'refused', error: mapped });
            return;
          }
        }
        resolve({ kind: 'retry' });
      });
      io.on('disconnect', (reason: string) => {
        if (reason === 'io client disconnect') return;
        close();
        if (dropped) dropped();
        else lost = true;
      });
    });
  }

  readGap(last: number | null, signal: AbortSignal): Promise<ConversationEvent[]> | null {
    return readGap(this.#reads, last, signal);
  }

  readAfter(afterEventId: number, signal: AbortSignal): Promise<ConversationEvent[]> {
    return readAfter(this.#reads, afterEventId, signal);
  }

  /** Sends `action` once the socket is open and resolves with the upstream's echo of it (action-echo.ts). */
  send(action: UserActionRecord, signal: AbortSignal | undefined): Promise<ConversationEvent> {
    return this.#echoes.send(action, signal, {
      timeoutMs: this.#live.options.echoTimeoutMs,
      ready: () => this.#socket.ready(),
      emit: (sent) => this.#io?.emit(SOCKET_EVENT.userAction, sent),
    });
  }

  released(event: ConversationEvent, eventId: number | null): void {
    if (eventId !== null) {
      this.#reads.recent.record(event);
      this.#echoes.settle(event);
    } else if (isSessionClose(event)) {
      void this.#endAfterSessionClose();
    }
  }

  ended(failure: BridgeError): void {
    this.#echoes.rejectAll(failure);
  }

  /**
   * The upstream's session close (the agent stopped, also on the way to a delete): the stream ends
   * here with a code instead of idling on a socket whose agent is gone. One REST read tells a delete
   * from a stop; a client subscribes again with afterEventId to resume a stopped one.
   */
  async #endAfterSessionClose(): Promise<void> {
    let deleted = false;
    try {
      await this.#live.resolveTarget(
        this.#socket.conversationId,
        this.#socket.credentials,
        AbortSignal.timeout(this.#live.options.connectTimeoutMs),
      );
    } catch (error) {
      deleted = error instanceof ConversationNotFound;
    }
    this.#socket.endWith(new BridgeError(deleted ? 'CONVERSATION_DELETED' : 'CONVERSATION_STOPPED'));
  }
}

/** The id-less agent_state_changed `stopped` the upstream sends when a conversation's session closes. */
function isSessionClose(event: ConversationEvent): boolean {
  return event.eventId === null && event.kind === 'AGENT_STATE_CHANGED' && event.stateRaw === 'stopped';
}
