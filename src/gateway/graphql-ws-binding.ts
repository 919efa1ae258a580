/**
 * graphql-ws's server bound to a `ws` WebSocketServer: what `useServer` from 'graphql-ws/use/ws' does
 * (same close codes, keep-alive pings, internal-error handling, dispose), tuned for fan-out, where
 * thousands of sockets receive the same result of one shared execution
 * (src/gateway/shared-subscription-results.ts):
 *
 * - The payload of a `next` message is serialized once per result object, not once per subscriber:
 *   graphql-ws serializes `{id, type, payload}` itself, so `onNext` hands it a stand-in whose `toJSON`
 *   parks the cached JSON and yields a marker, and `send` (called synchronously right after the
 *   serialization, with nothing in between) splices the JSON in place of the marker.
 * - Frames written to a socket within one turn of the event loop leave in one `writev` (the socket is
 *   corked at its first frame and uncorked in `setImmediate`): the upstream's events of one agent step
 *   arrive together, and a write syscall per frame was the largest single cost of fan-out.
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
export const WS_KEEP_ALIVE_MS = 12_000;

/** Bytes waiting for a client above which `send` waits for the write (back-pressure to the bridge). */
export const WS_SEND_HIGH_WATER = 64 * 1024;

/** Sockets corked during this turn of the event loop; uncorked together in setImmediate. */
const corked = new Set<WebSocket>();

function uncorkAll(): void {
  for (const socket of corked) netSocketOf(socket)?.uncork();
  corked.clear();
}

/** The TCP socket under a ws WebSocket (`_socket` is ws-internal, stable across ws 7-8). */
function netSocketOf(socket: WebSocket): { cork(): void; uncork(): void } | undefined {
  return (socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
}

function corkForThisTurn(socket: WebSocket): void {
  if (corked.has(socket)) return;
  const tcp = netSocketOf(socket);
  if (!tcp) return;
  tcp.cork();
  if (corked.size === 0) setImmediate(uncorkAll);
  corked.add(socket);
}

/** Marker the stand-in serializes to; a NUL cannot occur unescaped in JSON, so the marker is unique. */
const MARKER = '\u0000shared-payload';
const MARKER_TAIL = `"payload":${JSON.stringify(MARKER)}}`;

/** Cached payload JSON per result object; results of a shared execution are one object. */
const payloadJson = new WeakMap<ExecutionResult, SerializedPayload>();
/** Set by a stand-in's toJSON, taken by the next send (same synchronous stretch of graphql-ws code). */
let parkedJson: string | null = null;

/** The stand-in graphql-ws puts into its message; serializes to the marker and parks the real JSON. */
class SerializedPayload {
  constructor(readonly json: string) {}
  toJSON(): string {
    parkedJson = this.json;
    return MARKER;
  }
}

/** graphql-ws's own payload of a `next` message: the result, errors in their JSON form when present. */
function serializePayload(result: ExecutionResult): string {
  const { errors, ...rest } = result;
  return JSON.stringify(errors ? { ...rest, errors: errors.map((error) => error.toJSON()) } : rest);
}

function sharedPayload(result: ExecutionResult): SerializedPayload {
  let payload = payloadJson.get(result);
  if (!payload) {
    payload = new SerializedPayload(serializePayload(result));
    payloadJson.set(result, payload);
  }
  return payload;
}

/** Puts the parked JSON in place of the marker; messages without a marker pass unchanged. */
function splice(data: string): string {
  const json = parkedJson;
  if (json === null) return data;
  parkedJson = null;
  if (!data.endsWith(MARKER_TAIL)) return data;
  return `${data.slice(0, data.length - MARKER_TAIL.length)}"payload":${json}}`;
}

/** Same text as graphql-ws's `limitCloseReason`. */
function closeReason(error: unknown, isProd: boolean): string {
  if (isProd) return 'Internal server error';
  const reason = error instanceof Error ? error.message : String(error);
  return reason.length < 124 ? reason : 'Internal server error';
}

/**
 * Serves graphql-ws on `wsServer`, like `useServer(options, wsServer)`. `options.onNext` must not be
 * set: this binding uses that hook for the shared serialization.
 */
export function serveGraphqlWs(
  options: Omit<ServerOptions<Record<string, unknown>, SocketExtra>, 'onNext'>,
  wsServer: WebSocketServer,
  keepAliveMs = WS_KEEP_ALIVE_MS,
): { dispose(): Promise<void> } {
  const isProd = process.env.NODE_ENV === 'production';
  const server = makeServer<Record<string, unknown>, SocketExtra>({
    ...options,
    onNext: (_ctx, _id, _payload, _args, result) =>
      // A stand-in object is accepted as the payload (graphql-ws only checks it is an object).
      sharedPayload(result as ExecutionResult) as unknown as ExecutionResult,
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

  wsServer.on('connection', (socket) => {
    socket.once('error', (error) => {
      console.error('Internal error emitted on a WebSocket socket. Please check your implementation.', error);
      socket.close(CloseCode.InternalServerError, closeReason(error, isProd));
    });
    socket.on('pong', () => awaitingPong.delete(socket));
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (message) => {
          const data = splice(message);
          if (socket.readyState !== socket.OPEN) return;
          corkForThisTurn(socket);
          if (socket.bufferedAmount < WS_SEND_HIGH_WATER) {
            socket.send(data);
            return;
          }
          // A slow reader: wait for the write, so the subscription pulls its next event only then.
          return new Promise<void>((resolve, reject) => {
            socket.send(data, (error) => (error ? reject(error) : resolve()));
          });
        },
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', async (data) => {
            try {
              await handle(String(data));
            } catch (error) {
              console.error(
                'Internal error occurred during message handling. Please check your implementation.',
                error,
              );
              socket.close(CloseCode.InternalServerError, closeReason(error, isProd));
            }
          }),
      },
      { socket },
    );
    socket.once('close', (code, reason) => {
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
