/**
 * gateway/websocket/: subscriptions over graphql-ws. This room holds the binding (this file), the
 * live fan-out groups (live-fan-out.ts) and shared executions (shared-subscription-results.ts), frame
 * writing (ws-frames.ts), the client-message check (ws-guard.ts) and the spread keep-alive
 * (ws-keep-alive.ts). It may import protection/ only.
 *
 * graphql-ws's server bound to a `ws` WebSocketServer: what `useServer` from 'graphql-ws/use/ws' does
 * (same close codes, keep-alive pings, internal-error handling, dispose), tuned for fan-out, where
 * thousands of sockets receive the same result of one shared execution:
 *
 * - A live subscription delivered by a group (live-fan-out.ts) is adopted: `onOperation` hands the
 *   {@link LiveMember} its socket and operation id and takes the operation out of graphql-ws's
 *   `ctx.subscriptions`, so graphql-ws's per-operation state (its suspended `for await`, the execution
 *   arguments and context) is released, and it sends no `complete` of its own. From then on this
 *   binding answers for the id: the client's `complete` cancels the member, a second `subscribe` with
 *   the id closes the socket with 4409 as graphql-ws would, and a closed socket cancels its members.
 * - Other subscriptions (SSE never comes here; catch-ups with `afterEventId`) do not go through
 *   graphql-ws's per-result path (an async function per result with two awaits, an object spread,
 *   message validation and a JSON.stringify of the whole result per subscriber): `onOperation` hands
 *   graphql-ws a stand-in stream ({@link DirectDelivery}) that pulls the real stream itself and
 *   writes each `next` frame as the subscription's own prefix plus the payload JSON, serialized once
 *   per result object. The stand-in ends when the real stream ends or fails, so graphql-ws still sends
 *   `complete` / `error` and handles the client's `complete`. Both paths write frames byte for byte as
 *   graphql-ws does (test/live/graphql-ws-binding.test.ts), corked per turn (ws-frames.ts).
 * - A stand-in writes at most {@link WS_FRAMES_PER_TURN} frames per turn, then continues in the next
 *   one, so a backlog never becomes one multi-second run of microtasks holding all those writes.
 * - A frame goes out without a write callback and promise while less than WS_SEND_HIGH_WATER bytes
 *   wait for the client; above that the stand-in waits for the write, so a slow reader stops pulling
 *   events and the bridge's per-subscriber bound (SUBSCRIBER_TOO_SLOW) still applies instead of memory
 *   growing inside `ws` (a group's member counts its results instead).
 * - One keep-alive timer for all sockets instead of one interval per socket, its pings spread over the
 *   period (ws-keep-alive.ts). Its slices are the binding's list of open sockets: create the
 *   WebSocketServer with `clientTracking: false`, since ws's own list costs a `close` listener closure
 *   per socket (and an array of two listeners where there would be one).
 * - The upgrade request is not kept: graphql-ws's `ctx.extra` holds only the socket (and its adopted
 *   operations, the first one inline).
 * - The `connection_init` deadline is the binding's own timer, cleared and dropped when the message
 *   arrives: graphql-ws's would stay referenced by the socket's closures until the socket closes.
 */
import type { ExecutionResult } from 'graphql';
import {
  CloseCode,
  DEPRECATED_GRAPHQL_WS_PROTOCOL,
  handleProtocols,
  makeServer,
  type ServerOptions,
} from 'graphql-ws';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import { type AdoptedOperations, LiveMember } from './live-fan-out.ts';
import { currentTurn, nextFramePrefix, sendFrame, serializePayload, warnIfUncorkable } from './ws-frames.ts';
import { clientMessage } from './ws-guard.ts';
import { keepSocketsAlive } from './ws-keep-alive.ts';

/** What graphql-ws's context `extra` holds for an operation over this binding. */
export interface SocketExtra {
  readonly socket: WebSocket;
  /** Operations adopted from graphql-ws (live groups). */
  readonly adoptedCount: number;
}

/**
 * One socket as graphql-ws sees it (its `WebSocket` interface: protocol, send, close, onMessage, as
 * methods rather than closures per socket) and as the binding keeps it (graphql-ws's `extra`), with
 * the operations adopted from graphql-ws: the first inline (most sockets carry one subscription, and
 * a Map is about 180 bytes), any more in a Map.
 */
class SocketSession implements SocketExtra, AdoptedOperations {
  readonly socket: WebSocket;
  /** graphql-ws's handler of an incoming message, given in `onMessage`. */
  handle: ((data: string) => Promise<void>) | null = null;
  /** What graphql-ws's `opened` returned: call it when the socket closes. */
  closed: ((code?: number, reason?: string) => Promise<void>) | null = null;
  /** Closes the socket unless `connection_init` arrives first; dropped once it has. */
  initTimer: NodeJS.Timeout | null = null;
  /** Found by its own id (a member's id is set before it enters). */
  #first: LiveMember | null = null;
  #more: Map<string, LiveMember> | null = null;

  constructor(socket: WebSocket) {
    this.socket = socket;
  }

  get adoptedCount(): number {
    return (this.#first ? 1 : 0) + (this.#more?.size ?? 0);
  }

  get(id: string): LiveMember | undefined {
    if (this.#first?.id === id) return this.#first;
    return this.#more?.get(id);
  }

  set(id: string, member: LiveMember): void {
    if (this.#first) {
      this.#more ??= new Map();
      this.#more.set(id, member);
    } else {
      this.#first = member;
    }
  }

  delete(id: string): boolean {
    if (this.#first?.id === id) {
      this.#first = null;
      return true;
    }
    return this.#more?.delete(id) ?? false;
  }

  /** The adopted operations now (a copy: cancelling one removes it). */
  adoptedMembers(): LiveMember[] {
    const members = this.#more ? [...this.#more.values()] : [];
    if (this.#first) members.push(this.#first);
    return members;
  }

  /** `connection_init` arrived (or the socket closed): the timer goes, and with it its memory. */
  clearInitTimer(): void {
    if (this.initTimer === null) return;
    clearTimeout(this.initTimer);
    this.initTimer = null;
  }

  get protocol(): string {
    return this.socket.protocol;
  }

  send(data: string): Promise<void> | undefined {
    return sendFrame(this.socket, data);
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  onMessage(handle: (data: string) => Promise<void>): void {
    this.handle = handle;
  }
}

/** Operations open on a socket: graphql-ws's own and those this binding adopted. */
export function openOperations(ctx: { subscriptions: Record<string, unknown>; extra: SocketExtra }): number {
  return Object.keys(ctx.subscriptions).length + ctx.extra.adoptedCount;
}

/**
 * What an emptied record of a socket's graphql-ws operations inherits: nothing. graphql-ws starts each
 * socket's record as `Object.create(null)`, which V8 keeps as a hash table (about 180 bytes) for the
 * socket's whole life; once the binding has taken the last operation in it (the live subscription, on
 * most sockets), it is swapped for an {@link emptyOperations} object, in V8's fast mode, which
 * inherits nothing either: graphql-ws reads `ctx.subscriptions` afresh at every use (`in`, writes,
 * deletes, the spread at close) and assigns it itself at close, so it sees no difference.
 */
const NO_OPERATIONS = Object.freeze(Object.create(null) as object);

/**
 * A constructor, not `Object.create(NO_OPERATIONS)`: V8 sizes a constructor's objects by the
 * properties it writes (none here), so each is 24 bytes, where `Object.create` reserves four property
 * slots (56 bytes). A later operation on the socket adds its property as to any object.
 */
function EmptyOperations(): void {}
EmptyOperations.prototype = NO_OPERATIONS;

/** An empty record of a socket's graphql-ws operations that inherits nothing. */
function emptyOperations(): Record<string, unknown> {
  return new (EmptyOperations as unknown as new () => Record<string, unknown>)();
}

function isEmpty(record: object): boolean {
  for (const _ in record) return false;
  return true;
}

/** graphql-ws's default `connectionInitWaitTimeout`. */
const GRAPHQL_WS_CONNECTION_INIT_WAIT_MS = 3_000;

/** What graphql-ws's own timer does when `connection_init` has not arrived in time. */
function closeUninitialised(session: SocketSession): void {
  session.initTimer = null;
  session.close(CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
}

/** Default keep-alive period of graphql-ws's `useServer`, kept: ping every 12 s, drop after 12 s silent. */
const WS_KEEP_ALIVE_MS = 12_000;

/**
 * Frames one subscription writes per turn before it waits for the next turn. Results already queued
 * are otherwise pulled in one long run of microtasks: with thousands of subscribers behind, that run
 * would hold every write (corked) and every other request for seconds. Four keeps an agent step's
 * events (they arrive together) in one write.
 */
const WS_FRAMES_PER_TURN = 4;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * What graphql-ws iterates instead of a subscription's result stream: it yields nothing, writes each
 * result of `source` to the socket as a `next` frame, and settles graphql-ws's pending `next()` when
 * the source ends (done) or fails (rejects: graphql-ws sends `error`). `return()` (client `complete`,
 * socket closed) stops the pump and returns the source. Promise callbacks, no async functions: this
 * runs once per subscriber and result.
 */
class DirectDelivery implements AsyncIterableIterator<never> {
  readonly #source: AsyncIterator<ExecutionResult>;
  /** `{"id":"<id>","type":"next","payload":` — graphql-ws's key order. */
  readonly #prefix: string;
  /** The socket itself, not a send closure: one of these lives per open subscription. */
  readonly #socket: WebSocket;
  #started = false;
  #stopped = false;
  #turn = -1;
  #framesThisTurn = 0;
  #pending: { resolve: (result: IteratorResult<never>) => void; reject: (error: unknown) => void } | null =
    null;

  constructor(source: AsyncIterable<ExecutionResult>, id: string, socket: WebSocket) {
    this.#source = source[Symbol.asyncIterator]();
    this.#prefix = nextFramePrefix(id);
    this.#socket = socket;
  }

  next(): Promise<IteratorResult<never>> {
    if (this.#stopped) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
      if (!this.#started) {
        this.#started = true;
        this.#pull();
      }
    });
  }

  return(): Promise<IteratorResult<never>> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#pending?.resolve(DONE);
      this.#pending = null;
      const returned = this.#source.return?.();
      if (returned) return returned.then(() => DONE);
    }
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  readonly #pull = (): void => {
    if (this.#stopped) return;
    this.#source.next().then(this.#deliver, this.#fail);
  };

  readonly #deliver = (step: IteratorResult<ExecutionResult>): void => {
    if (this.#stopped) return;
    if (step.done) {
      this.#stopped = true;
      this.#pending?.resolve(DONE);
      this.#pending = null;
      return;
    }
    let written: Promise<void> | undefined;
    try {
      written = sendFrame(this.#socket, `${this.#prefix}${serializePayload(step.value)}}`);
    } catch (error) {
      this.#fail(error);
      return;
    }
    // A slow reader: the next result is pulled only once this frame is written.
    if (written) written.then(this.#pull, this.#fail);
    else if (this.#yieldsNow()) setImmediate(this.#pull);
    else this.#pull();
  };

  /** True when this subscription wrote WS_FRAMES_PER_TURN frames in this turn already. */
  #yieldsNow(): boolean {
    const turn = currentTurn();
    if (this.#turn !== turn) {
      this.#turn = turn;
      this.#framesThisTurn = 0;
    }
    return ++this.#framesThisTurn >= WS_FRAMES_PER_TURN;
  }

  readonly #fail = (error: unknown): void => {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#pending?.reject(error);
    this.#pending = null;
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<ExecutionResult> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * A client message about an adopted operation, answered as graphql-ws would answer it for one of its
 * own: `complete` ends the operation (nothing is sent back), a `subscribe` reusing the id closes the
 * socket with 4409. Other messages (true: answered here, false: for graphql-ws) go on.
 */
function answeredForAdopted(
  message: { type: string; id?: string },
  adopted: AdoptedOperations,
  socket: WebSocket,
): boolean {
  const member = message.id === undefined ? undefined : adopted.get(message.id);
  if (!member) return false;
  if (message.type === 'complete') {
    member.cancel();
    return true;
  }
  if (message.type === 'subscribe') {
    socket.close(CloseCode.SubscriberAlreadyExists, `Subscriber for ${message.id} already exists`);
    return true;
  }
  return false;
}

/** Same text as graphql-ws's `limitCloseReason`. */
function closeReason(error: unknown, isProd: boolean): string {
  if (isProd) return 'Internal server error';
  const reason = error instanceof Error ? error.message : String(error);
  return reason.length < 124 ? reason : 'Internal server error';
}

/**
 * Serves graphql-ws on `wsServer`, like `useServer(options, wsServer)`. `options.onOperation` cannot
 * be set: this binding uses that hook for the direct delivery of subscription results.
 */
export function serveGraphqlWs(
  options: Omit<ServerOptions<Record<string, unknown>, SocketExtra>, 'onOperation'>,
  wsServer: WebSocketServer,
  keepAliveMs = WS_KEEP_ALIVE_MS,
): { dispose(): Promise<void> } {
  const isProd = process.env.NODE_ENV === 'production';
  const initWaitMs = options.connectionInitWaitTimeout ?? GRAPHQL_WS_CONNECTION_INIT_WAIT_MS;
  const server = makeServer<Record<string, unknown>, SocketExtra>({
    ...options,
    // The binding keeps this timer itself: graphql-ws's stays referenced by the socket's closures
    // until the socket closes (a Timeout, its callback and numbers: ~250 bytes per open socket).
    connectionInitWaitTimeout: 0,
    onOperation: (ctx, id, _payload, _args, result) => {
      if (result instanceof LiveMember) {
        // The client completed it during the subscribe phase: graphql-ws forgot the id already.
        if (!(id in ctx.subscriptions)) result.cancel();
        else adopt(ctx, id, result, ctx.extra as SocketSession);
        // Not iterable and no longer in ctx.subscriptions: graphql-ws sends nothing and lets go.
        return undefined;
      }
      if (!isAsyncIterable(result)) return undefined;
      return new DirectDelivery(result, id, ctx.extra.socket);
    },
  });
  wsServer.options.handleProtocols = handleProtocols;

  /** Every open socket of this binding, which so needs no list of ws's own (`clientTracking: false`). */
  const keepAlive = keepSocketsAlive(keepAliveMs);
  /** Set by dispose: called when the last socket has closed. */
  let allClosed: (() => void) | null = null;

  wsServer.once('error', (error) => {
    console.error('Internal error emitted on the WebSocket server. Please check your implementation.', error);
    for (const client of keepAlive.sockets())
      client.close(CloseCode.InternalServerError, closeReason(error, isProd));
  });

  /**
   * Takes the operation from graphql-ws: the member writes its frames and enters the session's adopted
   * operations, for which the binding answers.
   */
  const adopt = (
    ctx: { subscriptions: Record<string, unknown> },
    id: string,
    member: LiveMember,
    session: SocketSession,
  ) => {
    delete ctx.subscriptions[id];
    if (isEmpty(ctx.subscriptions)) ctx.subscriptions = emptyOperations();
    member.adopt(id, session);
  };

  // One listener function per event for every socket, finding the socket's session by `this`:
  // closures per socket were a third of the binding's own heap per idle subscriber.
  const sessions = new WeakMap<WebSocket, SocketSession>();
  const onSocketError = function (this: WebSocket, error: Error) {
    console.error('Internal error emitted on a WebSocket socket. Please check your implementation.', error);
    this.close(CloseCode.InternalServerError, closeReason(error, isProd));
  };
  const onPong = function (this: WebSocket) {
    keepAlive.answered(this);
  };
  const onSocketMessage = function (this: WebSocket, data: RawData) {
    const session = sessions.get(this);
    if (!session?.handle) return;
    const text = String(data);
    // Protocol violations close with 4400, not graphql-ws's 4500 (ws-guard.ts).
    const message = clientMessage(text);
    if (message === null) {
      this.close(4400, 'Invalid message received');
      return;
    }
    // graphql-ws marks the socket initialised as it reads this message (synchronously, below).
    if (message.type === 'connection_init') session.clearInitTimer();
    if (session.adoptedCount > 0 && answeredForAdopted(message, session, this)) return;
    const onHandlingError = (error: unknown) => {
      console.error(
        'Internal error occurred during message handling. Please check your implementation.',
        error,
      );
      this.close(CloseCode.InternalServerError, closeReason(error, isProd));
    };
    // A `then`, not an awaiting listener: graphql-ws's handling of a `subscribe` message settles
    // only when the subscription ends, so an awaiting listener was one more suspended async function
    // (a generator, a promise, a closure context) per open subscription.
    try {
      session.handle(text).catch(onHandlingError);
    } catch (error) {
      onHandlingError(error);
    }
  };
  const onSocketClose = function (this: WebSocket, code: number, reason: Buffer) {
    keepAlive.remove(this);
    if (keepAlive.size === 0) allClosed?.();
    if (
      !isProd &&
      code === CloseCode.SubprotocolNotAcceptable &&
      this.protocol === DEPRECATED_GRAPHQL_WS_PROTOCOL
    )
      console.warn(
        `Client provided the unsupported and deprecated subprotocol "${this.protocol}" used by subscriptions-transport-ws.`,
      );
    const session = sessions.get(this);
    if (!session) return;
    session.clearInitTimer();
    for (const member of session.adoptedMembers()) member.cancel();
    void session.closed?.(code, String(reason));
  };

  let corkingChecked = false;
  wsServer.on('connection', (socket) => {
    if (!corkingChecked) {
      corkingChecked = true;
      warnIfUncorkable(socket);
    }
    // `on`, not `once`: ws emits 'error' and 'close' once, and `once` adds a bound wrapper per socket.
    socket.on('error', onSocketError);
    socket.on('pong', onPong);
    socket.on('message', onSocketMessage);
    socket.on('close', onSocketClose);
    keepAlive.add(socket);
    const session = new SocketSession(socket);
    sessions.set(socket, session);
    session.closed = server.opened(session, session);
    // graphql-ws listens (and would have started its timer) only when it accepted the subprotocol.
    if (session.handle && initWaitMs > 0 && Number.isFinite(initWaitMs))
      session.initTimer = setTimeout(closeUninitialised, initWaitMs, session);
  });

  return {
    async dispose() {
      keepAlive.stop();
      // Resolved when every socket has closed, as ws's `close` callback is when it tracks them.
      const closed =
        keepAlive.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allClosed = resolve));
      for (const client of keepAlive.sockets()) client.close(1001, 'Going away');
      wsServer.removeAllListeners();
      await new Promise<void>((resolve, reject) =>
        wsServer.close((error) => (error ? reject(error) : resolve())),
      );
      await closed;
    },
  };
}
