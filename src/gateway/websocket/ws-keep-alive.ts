/**
 * Keep-alive pings for every WebSocket of a server from one timer, spread over the period: each socket
 * is pinged once per `periodMs` and terminated when it has not answered its previous ping by its next
 * one (graphql-ws's `useServer` bound: 12 s + 12 s), but only one slice of the sockets is pinged per
 * tick. Pinging them all at once was one burst of a write per socket every 12 s: with 4,000 sockets,
 * 100-240 ms in which no event was delivered (many-conversations' delivery p99).
 *
 * Its slices are also the binding's list of its open sockets (for dispose and the server's error),
 * kept with pings off too: ws's own list (`clientTracking`) adds a `close` listener closure per
 * socket, which with the binding's own makes a listener array (about 180 bytes per socket in all).
 */
import type { WebSocket } from 'ws';

/** Ticks per period: each tick pings the sockets of one slice. */
const SLICES = 12;

export interface KeepAlive {
  /** Starts pinging `socket` (each socket once). */
  add(socket: WebSocket): void;
  /** The socket answered a ping. */
  answered(socket: WebSocket): void;
  /** Stops pinging `socket` (it closed). */
  remove(socket: WebSocket): void;
  /** The sockets added and not removed yet. */
  readonly size: number;
  /** The sockets added and not removed yet. */
  sockets(): Iterable<WebSocket>;
  stop(): void;
}

/**
 * Pings every added socket once per `periodMs`; 0 or Infinity: no pings at all (the sockets are still
 * kept until removed). It registers no listener of its own: the caller reports pongs
 * ({@link KeepAlive.answered}) and closes ({@link KeepAlive.remove}) from the listeners it has anyway,
 * so a socket costs a set entry here.
 */
export function keepSocketsAlive(periodMs: number): KeepAlive {
  const slices = Array.from({ length: SLICES }, () => new Set<WebSocket>());
  const awaitingPong = new WeakSet<WebSocket>();
  let nextSlice = 0;
  let tick = 0;
  const timer =
    periodMs > 0 && Number.isFinite(periodMs)
      ? setInterval(
          () => {
            const slice = slices[tick++ % SLICES] as Set<WebSocket>;
            for (const socket of slice) {
              if (socket.readyState !== socket.OPEN) continue;
              if (awaitingPong.has(socket)) {
                socket.terminate();
                continue;
              }
              awaitingPong.add(socket);
              socket.ping();
            }
          },
          Math.max(1, Math.floor(periodMs / SLICES)),
        )
      : null;
  timer?.unref();
  return {
    add(socket) {
      (slices[nextSlice++ % SLICES] as Set<WebSocket>).add(socket);
    },
    answered(socket) {
      awaitingPong.delete(socket);
    },
    remove(socket) {
      // Twelve set lookups at a close instead of a map from socket to slice held for its whole life.
      for (const slice of slices) if (slice.delete(socket)) return;
    },
    get size() {
      let size = 0;
      for (const slice of slices) size += slice.size;
      return size;
    },
    *sockets() {
      for (const slice of slices) yield* slice;
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
