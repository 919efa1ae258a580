/**
 * Cuts SSE streams whose reader stopped draining, as graphql-ws cuts a paused socket.
 *
 * graphql-ws (graphql-ws-binding.ts) pings every socket each round and terminates one that has not
 * answered the previous round's ping, so a reader that stops reading is gone within one to two
 * rounds. SSE has no pong; what the gateway sees instead is the response's buffer: Yoga's node
 * adapter waits for `drain` before writing the next chunk, so a stalled reader leaves the response
 * waiting for a `drain` that never comes, and the stream (its socket, its upstream event subscription,
 * its queued events) stays forever. The same one-timer, two-round rule applies here: a stream that
 * was waiting for `drain` at one round and has not drained by the next is destroyed. A stream that
 * sends nothing while its reader pauses costs nothing and is not cut: only a reader that leaves
 * results undelivered is.
 */
import type { ServerResponse } from 'node:http';

/** Default of `SSE_STALL_TIMEOUT_MS`: graphql-ws's keep-alive period, so both transports cut alike. */
export const DEFAULT_SSE_STALL_TIMEOUT_MS = 12_000;

/** Watches streaming responses; one timer for all of them. */
export class SseStallGuard {
  readonly #periodMs: number;
  readonly #onCut: (response: ServerResponse) => void;
  /** Watched responses -> "was waiting for drain at the last round and has not drained since". */
  readonly #streams = new Map<ServerResponse, { stalled: boolean }>();
  #timer: NodeJS.Timeout | null = null;

  /**
   * @param periodMs one round; a stream is cut after one to two rounds without draining. 0 turns it off.
   * @param onCut called once per cut stream (logging).
   */
  constructor(periodMs: number, onCut: (response: ServerResponse) => void = () => {}) {
    this.#periodMs = periodMs;
    this.#onCut = onCut;
  }

  /** Streams being watched. */
  get size(): number {
    return this.#streams.size;
  }

  /** Watches `response` until it closes. */
  watch(response: ServerResponse): void {
    if (this.#periodMs <= 0) return;
    const state = { stalled: false };
    this.#streams.set(response, state);
    const onDrain = () => {
      state.stalled = false;
    };
    response.on('drain', onDrain);
    response.once('close', () => {
      response.off('drain', onDrain);
      this.#streams.delete(response);
      if (this.#streams.size === 0) this.#stop();
    });
    if (this.#timer === null) {
      this.#timer = setInterval(() => this.#round(), this.#periodMs);
      this.#timer.unref();
    }
  }

  #round(): void {
    for (const [response, state] of this.#streams) {
      if (!response.writableNeedDrain) {
        state.stalled = false;
        continue;
      }
      if (!state.stalled) {
        state.stalled = true;
        continue;
      }
      this.#streams.delete(response);
      this.#onCut(response);
      // The socket, not only the response: a half-written SSE frame must not be mistaken for a
      // complete one, and the reader learns the stream is over when it reads again.
      response.destroy();
      response.socket?.destroy();
    }
  }

  #stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Stops the timer (gateway close). */
  close(): void {
    this.#stop();
    this.#streams.clear();
  }
}
