/**
 * graphql-ws's server bound to a `ws` WebSocketServer: what `useServer` from 'graphql-ws/use/ws' does
 * (same close codes, keep-alive pings, internal-error handling, dispose), tuned for fan-out, where
 * thousands of sockets receive the same result of one shared execution
 * (src/gateway/shared-subscription-results.ts):
 *
 * - Subscription results do not go through graphql-ws's per-result path (an async function per
 *   result with two awaits, an object spread, message validation and a JSON.stringify of the whole
 *   result per subscriber): `onOperation` hands graphql-ws a stand-in stream ({@link DirectDelivery})
 *   that pulls the real stream itself and writes each `next` frame as the subscription's own prefix
 *   plus the payload JSON, serialized once per result object (a shared execution's result is one
 *   object for all its subscribers). The stand-in ends when the real stream ends or fails, so
 *   graphql-ws still sends `complete` / `error` and handles the client's `complete` as before. The
 *   frames are byte for byte what graphql-ws writes (test/live/graphql-ws-binding.test.ts).
 * - Frames written to a socket within one turn of the event loop leave in one `writev` (the socket is
 *   corked at its first frame and uncorked in `setImmediate`): the upstream's events of one agent step
 *   arrive together, and a write syscall per frame was the largest single cost of fan-out.
 * - A subscription writes at most {@link WS_FRAMES_PER_TURN} frames per turn, then continues in the
 *   next one, so a backlog never becomes one multi-second run of microtasks holding all those writes.
 * - A frame goes out without a write callback and promise while less than {@link WS_SEND_HIGH_WATER}
 *   bytes wait for the client; above that `send` waits for the write, so a slow reader stops pulling
 *   events and the bridge's per-subscriber bound (SUBSCRIBER_TOO_SLOW) still applies instead of memory
 *   growing inside `ws`.
 * - One keep-alive timer for all sockets instead of one interval per socket.
 * - The upgrade request is not kept: graphql-ws's `ctx.extra` holds only the socket.
 */
import type { ExecutionResult } from 'graphql';
import {
  CloseCode,
  DEPRECATED_GRAPHQL_WS_PROTOCOL,
  handleProtocols,
  makeServer,
  type ServerOptions,
} from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';

/** What graphql-ws's context `extra` holds for an operation over this binding. */
export interface SocketExtra {
  socket: WebSocket;
}

/** Default keep-alive period of graphql-ws's `useServer`, kept: ping every 12 s, drop after 12 s silent. */
const WS_KEEP_ALIVE_MS = 12_000;

/** Bytes waiting for a client above which `send` waits for the write (back-pressure to the bridge). */
const WS_SEND_HIGH_WATER = 64 * 1024;

/** Sockets corked during this turn of the event loop; uncorked together in setImmediate. */
const corked = new Set<WebSocket>();

/** Counts turns of the event loop in which frames were written (bumped where they are flushed). */
let turn = 0;

function uncorkAll(): void {
  turn++;
  for (const socket of corked) netSocketOf(socket)?.uncork();
  corked.clear();
}

/**
 * Frames one subscription writes per turn before it waits for the next turn. Results already queued
 * are otherwise pulled in one long run of microtasks: with thousands of subscribers behind, that run
 * would hold every write (corked) and every other request for seconds. Four keeps an agent step's
 * events (they arrive together) in one write.
 */
const WS_FRAMES_PER_TURN = 4;

/** The TCP socket under a ws WebSocket (`_socket` is ws-internal, stable across ws 7-8). */
function netSocketOf(socket: WebSocket): { cork(): void; uncork(): void } | undefined {
  return (socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
}

/**
 * Warns once (a process warning, on stderr) when ws no longer exposes a corkable TCP socket as `_socket`:
 * frames would still go out, one write syscall each, so this is a throughput loss rather than an outage,
 * and refusing to start over it would turn a dependency upgrade into downtime. Checked on the first
 * connection because `_socket` exists only once ws has taken over an upgraded socket; the per-frame path
 * keeps its plain `if (!tcp) return`.
 */
function warnIfUncorkable(socket: WebSocket): void {
  const tcp = netSocketOf(socket);
  if (typeof tcp?.cork === 'function' && typeof tcp.uncork === 'function') return;
  process.emitWarning(
    'ws no longer exposes its TCP socket as `_socket`: graphql-ws frames are written one syscall each (no corking). Update netSocketOf() in src/gateway/graphql-ws-binding.ts for this ws version.',
    'CorkingUnavailableWarning',
  );
}

function corkForThisTurn(socket: WebSocket): void {
  if (corked.has(socket)) return;
  const tcp = netSocketOf(socket);
  if (!tcp) return;
  tcp.cork();
  if (corked.size === 0) setImmediate(uncorkAll);
  corked.add(socket);
}

/** Payload JSON per result object: serialized once however many subscribers receive it. */
const payloadJson = new WeakMap<ExecutionResult, string>();

/** graphql-ws's own payload of a `next` message: the result, errors in their JSON form when present. */
function serializePayload(result: ExecutionResult): string {
  let json = payloadJson.get(result);
  if (json === undefined) {
    const { errors, ...rest } = result;
    json = JSON.stringify(errors ? { ...rest, errors: errors.map((error) => error.toJSON()) } : rest);
    payloadJson.set(result, json);
  }
  return json;
}

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
    this.#prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
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

/** Writes one frame: corked for this turn; a promise of the write only when the client is behind. */
function sendFrame(socket: WebSocket, data: string): Promise<void> | undefined {
  if (socket.readyState !== socket.OPEN) return undefined;
  corkForThisTurn(socket);
  if (socket.bufferedAmount < WS_SEND_HIGH_WATER) {
    socket.send(data);
    return undefined;
  }
  // A slow reader: wait for the write, so the subscription pulls its next event only then.
  return new Promise<void>((resolve, reject) => {
    socket.send(data, (error) => (error ? reject(error) : resolve()));
  });
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
  const server = makeServer<Record<string, unknown>, SocketExtra>({
    ...options,
    onOperation: (ctx, id, _payload, _args, result) => {
      if (!isAsyncIterable(result)) return undefined;
      return new DirectDelivery(result, id, ctx.extra.socket);
    },
  });
  wsServer.options.handleProtocols = handleProtocols;

  wsServer.once('error', (error) => {
    console.error('Internal error emitted on the WebSocket server. Please check your implementation.', error);
    for (const client of wsServer.clients)
      client.close(CloseCode.InternalServerError, closeReason(error, isProd));
  });

  // Keep-alive for every socket from one timer: a socket that has not answered the previous round's
  // ping by this round is terminated (same 12 s + 12 s bound as useServer's per-socket timers).
  const awaitingPong = new WeakSet<WebSocket>();
  const keepAlive =
    keepAliveMs > 0 && Number.isFinite(keepAliveMs)
      ? setInterval(() => {
          for (const socket of wsServer.clients) {
            if (socket.readyState !== socket.OPEN) continue;
            if (awaitingPong.has(socket)) {
              socket.terminate();
              continue;
            }
            awaitingPong.add(socket);
            socket.ping();
          }
        }, keepAliveMs)
      : null;
  keepAlive?.unref();

  let corkingChecked = false;
  wsServer.on('connection', (socket) => {
    if (!corkingChecked) {
      corkingChecked = true;
      warnIfUncorkable(socket);
    }
    socket.once('error', (error) => {
      console.error('Internal error emitted on a WebSocket socket. Please check your implementation.', error);
      socket.close(CloseCode.InternalServerError, closeReason(error, isProd));
    });
    socket.on('pong', () => awaitingPong.delete(socket));
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) => sendFrame(socket, data),
        close: (code, reason) => socket.close(code, reason),
        // A `then`, not an async listener: graphql-ws's handling of a `subscribe` message settles only
        // when the subscription ends, so an awaiting listener was one more suspended async function
        // (a generator, a promise, a closure context) per open subscription.
        onMessage: (handle) => {
          const onHandlingError = (error: unknown) => {
            console.error(
              'Internal error occurred during message handling. Please check your implementation.',
              error,
            );
            socket.close(CloseCode.InternalServerError, closeReason(error, isProd));
          };
          socket.on('message', (data) => {
            try {
              handle(String(data)).catch(onHandlingError);
            } catch (error) {
              onHandlingError(error);
            }
          });
        },
      },
      { socket },
    );
    // `on`, not `once`: ws emits 'close' once, and `once` adds a bound wrapper per socket.
    socket.on('close', (code, reason) => {
      if (
        !isProd &&
        code === CloseCode.SubprotocolNotAcceptable &&
        socket.protocol === DEPRECATED_GRAPHQL_WS_PROTOCOL
      )
        console.warn(
          `Client provided the unsupported and deprecated subprotocol "${socket.protocol}" used by subscriptions-transport-ws.`,
        );
      void closed(code, String(reason));
    });
  });

  return {
    async dispose() {
      if (keepAlive) clearInterval(keepAlive);
      for (const client of wsServer.clients) client.close(1001, 'Going away');
      wsServer.removeAllListeners();
      await new Promise<void>((resolve, reject) =>
        wsServer.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
