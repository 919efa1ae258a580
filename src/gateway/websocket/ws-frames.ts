/**
 * Writing graphql-ws frames to `ws` sockets for fan-out, shared by the binding (graphql-ws-binding.ts)
 * and the live groups (live-fan-out.ts):
 *
 * - Frames written to a socket within one turn of the event loop leave in one `writev` (the socket is
 *   corked at its first frame and uncorked in `setImmediate`): the upstream's events of one agent step
 *   arrive together, and a write syscall per frame was the largest single cost of fan-out.
 * - A result's payload JSON is serialized once, however many subscribers receive it.
 */
import type { ExecutionResult } from 'graphql';
import type { WebSocket } from 'ws';

/** Bytes waiting for a client above which `send` waits for the write (back-pressure to the bridge). */
export const WS_SEND_HIGH_WATER = 64 * 1024;

/** Sockets corked during this turn of the event loop; uncorked together in setImmediate. */
const corked = new Set<WebSocket>();

/** Counts turns of the event loop in which frames were written (bumped where they are flushed). */
let turn = 0;

/** The current turn number: changes each time corked frames are flushed. */
export function currentTurn(): number {
  return turn;
}

function uncorkAll(): void {
  turn++;
  for (const socket of corked) netSocketOf(socket)?.uncork();
  corked.clear();
}

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
export function warnIfUncorkable(socket: WebSocket): void {
  const tcp = netSocketOf(socket);
  if (typeof tcp?.cork === 'function' && typeof tcp.uncork === 'function') return;
  process.emitWarning(
    'ws no longer exposes its TCP socket as `_socket`: graphql-ws frames are written one syscall each (no corking). Update netSocketOf() in src/gateway/websocket/ws-frames.ts for this ws version.',
    'CorkingUnavailableWarning',
  );
}

export function corkForThisTurn(socket: WebSocket): void {
  if (corked.has(socket)) return;
  const tcp = netSocketOf(socket);
  if (!tcp) return;
  tcp.cork();
  if (corked.size === 0) setImmediate(uncorkAll);
  corked.add(socket);
}

/**
 * `{"id":"<id>","type":"next","payload":`, graphql-ws's key order: what a subscription's `next` frames
 * start with, kept per subscription. Joined, not concatenated: one flat string (about 90 bytes for a
 * UUID id) instead of a tree of cons strings over the parts (about 150), per open subscription.
 */
export function nextFramePrefix(id: string): string {
  return ['{"id":', JSON.stringify(id), ',"type":"next","payload":'].join('');
}

/** Payload JSON per result object: serialized once however many subscribers receive it. */
const payloadJson = new WeakMap<ExecutionResult, string>();

/** graphql-ws's own payload of a `next` message: the result, errors in their JSON form when present. */
export function serializePayload(result: ExecutionResult): string {
  let json = payloadJson.get(result);
  if (json === undefined) {
    const { errors, ...rest } = result;
    json = JSON.stringify(errors ? { ...rest, errors: errors.map((error) => error.toJSON()) } : rest);
    payloadJson.set(result, json);
  }
  return json;
}

/** Writes one frame: corked for this turn; a promise of the write only when the client is behind. */
export function sendFrame(socket: WebSocket, data: string): Promise<void> | undefined {
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
