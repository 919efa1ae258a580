/**
 * One buffered attempt as an undici dispatch handler: the attempt's deadline (connect, headers and the
 * whole body together, or the caller's abort), the answer's status and headers, and its body collected
 * and decoded as undici's `body.text()` decodes it.
 *
 * Why not `dispatcher.request()` and `body.text()`, as streamed calls still do (http-stream.ts): per
 * call, `request()` builds a Node Readable for the body and a consumer for `text()`, and needs an abort
 * signal, which was an EventTarget (attempt-deadline.ts) with undici's listener on it plus one on the
 * body's `close` to take it off. A handler is handed the function that aborts the call
 * (`controller.abort`), so the deadline calls it directly: the same answers and the same errors, with
 * ~10-20 µs less CPU per call (two to three times the JSON.parse of a 20-conversation page).
 *
 * Every path ends in exactly one of {@link BufferedAnswer.onResponseEnd} or
 * {@link BufferedAnswer.onResponseError} (undici calls one of them for every dispatched request, also
 * for one it refused synchronously), and both clear the timer and the listener on the caller's signal.
 */
import type { Dispatcher } from 'undici';

/** What the attempt produced: the status, the headers and the body as text. */
interface BufferedResponse {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  text: string;
}

/** The outcome of a buffered attempt, handed over once. */
export interface BufferedOutcome {
  /** The whole answer arrived. */
  completed(response: BufferedResponse): void;
  /**
   * The call failed (no answer, a broken body, an abort); `abort` says why the attempt aborted itself,
   * when it did (read it as an AbortSignal's `aborted` and `reason`).
   */
  failed(error: unknown, abort: AttemptAbort): void;
  /** The status, as soon as the headers arrive (the breaker needs it even when the body then fails). */
  headersArrived(status: number): void;
}

/** Whether and why an attempt aborted itself: the shape `mapTransportError` reads of a signal. */
interface AttemptAbort {
  readonly aborted: boolean;
  readonly reason: unknown;
}

/** The UTF-8 byte order mark, skipped at the start of a body as undici's `text()` skips it. */
const BOM = [0xef, 0xbb, 0xbf] as const;

/** A dispatch handler collecting one answer within the attempt's deadline. */
export class BufferedAnswer implements Dispatcher.DispatchHandler, AttemptAbort {
  aborted = false;
  reason: unknown = undefined;
  #controller: Dispatcher.DispatchController | null = null;
  #status = 0;
  #headers: Dispatcher.ResponseData['headers'] = {};
  #chunks: Buffer[] = [];
  #length = 0;
  #settled = false;
  readonly #outcome: BufferedOutcome;
  readonly #parent: AbortSignal | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #onParentAbort = () => this.abort(this.#parent?.reason);

  /**
   * @param parent the caller's signal; its abort aborts the call with its reason
   * @param timeoutMs the whole attempt's budget
   * @param timeoutReason builds the reason the deadline aborts with
   */
  constructor(
    outcome: BufferedOutcome,
    parent: AbortSignal | undefined,
    timeoutMs: number,
    timeoutReason: () => unknown,
  ) {
    this.#outcome = outcome;
    this.#parent = parent;
    this.#timer = setTimeout(() => this.abort(timeoutReason()), timeoutMs);
    if (parent?.aborted) this.abort(parent.reason);
    else parent?.addEventListener('abort', this.#onParentAbort, { once: true });
  }

  /**
   * Aborts the call with `reason` (once). Before undici has started the request, it is aborted as soon
   * as it starts, as `request()` does with an aborted signal.
   */
  abort(reason: unknown): void {
    if (this.aborted || this.#settled) return;
    this.aborted = true;
    this.reason = reason;
    this.#release();
    this.#controller?.abort(reason as Error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Called again when undici retries the request on another connection: the newest one counts.
    this.#controller = controller;
    if (this.aborted) controller.abort(this.reason as Error);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Dispatcher.ResponseData['headers'],
  ): void {
    // 1xx answers are informational; `request()` skips them too.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
    this.#outcome.headersArrived(statusCode);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settle();
    this.#outcome.completed({
      status: this.#status,
      headers: this.#headers,
      text: decodeBody(this.#chunks, this.#length),
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: unknown): void {
    if (this.#settled) return;
    this.#settle();
    this.#outcome.failed(error, this);
  }

  #settle(): void {
    this.#settled = true;
    this.#release();
  }

  /** Clears the timer and stops listening to the caller's signal. Idempotent. */
  #release(): void {
    clearTimeout(this.#timer);
    this.#parent?.removeEventListener('abort', this.#onParentAbort);
  }
}

/**
 * The body as text, exactly as undici's `body.text()` answers it (lib/api/readable.js `chunksDecode`):
 * UTF-8, a leading byte order mark skipped, malformed bytes as U+FFFD.
 */
export function decodeBody(chunks: readonly Buffer[], length: number): string {
  if (chunks.length === 0 || length === 0) return '';
  const buffer = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length);
  const start =
    buffer.length > 2 && buffer[0] === BOM[0] && buffer[1] === BOM[1] && buffer[2] === BOM[2] ? 3 : 0;
  return buffer.toString('utf8', start);
}
