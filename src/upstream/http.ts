/**
 * The one HTTP client of the gateway towards the conversation service, one per gateway and shared by
 * every caller (it holds no caller state). It wires the parts around each call: the caller's fair share
 * (fair-share.ts), the shared concurrency gate and circuit breaker (circuit-breaker.ts), the exchange on
 * the wire (http-exchange.ts), retries of idempotent reads (retry-policy.ts) and the observers of
 * metrics, traces and the log. Failures get their codes in failures.ts, nowhere else.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { breakerOutcome } from './breaker-outcome.ts';
import {
  ADMITTED,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitState,
  ConcurrencyGate,
  GateRefusal,
} from './circuit-breaker.ts';
import {
  abortError,
  circuitOpen,
  credentialOverloaded,
  gatewayOverloaded,
  UpstreamError,
  type UpstreamErrorCode,
} from './failures.ts';
import { FairShare, type Lane } from './fair-share.ts';
import { type ExchangeTarget, exchange, type UpstreamRequest } from './http-exchange.ts';
import { type StreamOptions, streamExchange, type UpstreamStream } from './http-stream.ts';
import { createUpstreamPool, type PoolSettings } from './pool.ts';
import { type RetryPolicy, retryDelayFor } from './retry-policy.ts';

/** What the client reports for each attempt; tests count upstream calls with it. */
export interface UpstreamCallInfo {
  method: string;
  path: string;
  attempt: number;
}

/** Options of {@link UpstreamClient}. */
export interface UpstreamClientOptions {
  /** Base URL of the conversation service, e.g. `http://127.0.0.1:3000`. Only its origin is used. */
  baseUrl: string;
  /**
   * Deadline of every attempt in ms: connect, headers and the whole body together (ends with
   * UPSTREAM_TIMEOUT). Retries get a fresh one; the caller's signal still bounds them all. @default 10000
   */
  timeoutMs?: number;
  /** IANA zone of the upstream's zone-less timestamps (records and events). @default 'UTC' */
  timeZone?: string;
  /**
   * Observer for upstream records the gateway could not read at all and left out of an answer, for
   * the log. Receives the route, the index in the page (null for a lookup) and why; never a value.
   */
  onRecordDropped?: (info: { path: string; index: number | null; reason: string }) => void;
  /** TCP connect timeout in ms. @default 5000 */
  connectTimeoutMs?: number;
  /**
   * Largest upstream answer body; a bigger one fails the call with UPSTREAM_ERROR instead of being
   * buffered (one misbehaving upstream must not exhaust the gateway's memory). @default 16 MiB
   */
  maxResponseBytes?: number;
  /** Upper bound of pooled connections. @default 64 */
  connections?: number;
  /** Extra attempts for idempotent reads after a connection error or a 429/503. @default 2 */
  retries?: number;
  /** First backoff delay in ms (doubles per attempt) when no Retry-After is given. @default 100 */
  retryBaseDelayMs?: number;
  /** A Retry-After longer than this is not waited for; the caller gets RATE_LIMITED instead. @default 2000 */
  maxRetryAfterMs?: number;
  /** Replaces the pool (tests, proxies). Not closed by `close()`: whoever made it owns it. */
  dispatcher?: Dispatcher;
  /** Observer called once per attempt (before sending). */
  onCall?: (info: UpstreamCallInfo) => void;
  /** Observer for mapped failures, for the log. Receives no secrets. */
  onFailure?: (info: { method: string; path: string; code: UpstreamErrorCode; status?: number }) => void;
  /**
   * Instrumentation (metrics, tracing): called when an attempt is sent; the returned function, if any,
   * is called once with its outcome (HTTP status when an answer arrived, the mapped code on failure).
   */
  onAttempt?: (info: UpstreamCallInfo) => ((outcome: UpstreamAttemptOutcome) => void) | undefined;
  /** Circuit breaker of this origin; `false` turns it off. @default { failureThreshold: 5, resetTimeoutMs: 5000 } */
  circuitBreaker?: CircuitBreakerOptions | false;
  /** Calls in flight at once (the rest wait in a queue). @default connections */
  maxConcurrent?: number;
  /** Calls allowed to wait for a slot; more fail fast with UPSTREAM_UNAVAILABLE. @default 1000 */
  maxQueued?: number;
  /**
   * Calls in flight per credential (fair-share.ts); 0 turns the bound off.
   * @default a quarter of `connections` (16 of 64), at least 1
   */
  concurrencyPerCredential?: number;
}

/** What {@link UpstreamClientOptions.onAttempt}'s finisher receives. */
export interface UpstreamAttemptOutcome {
  /** HTTP status when the upstream answered. */
  status?: number;
  /** Mapped failure code, when the attempt failed. */
  code?: UpstreamErrorCode;
}

/** One attempt on the wire; `answered` learns the status as soon as the headers arrive. */
type Send<T> = (answered: (status: number) => void) => Promise<T>;

/** The undici-backed client. One per gateway; shared by all callers (it holds no caller state). */
export class UpstreamClient {
  readonly origin: string;
  /** The deadline of one attempt in ms (UpstreamClientOptions.timeoutMs). */
  readonly timeoutMs: number;
  /** IANA zone the upstream's zone-less timestamps are read in (see timestamps.ts). */
  readonly timeZone: string;
  private readonly onRecordDropped: UpstreamClientOptions['onRecordDropped'];
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  /** Where each attempt goes and its budget (built once: every attempt reads it). */
  private readonly target: ExchangeTarget;
  /** How the streaming pool is built, when this client owns its pools; null: streams share `dispatcher`. */
  private readonly streamPoolSettings: PoolSettings | null;
  /** Built on the first stream: answers of any size, kept apart from the JSON pool and its cap. */
  private streamTarget: ExchangeTarget | null = null;
  private readonly retries: number;
  private readonly retryPolicy: RetryPolicy;
  private readonly onCall: UpstreamClientOptions['onCall'];
  private readonly onFailure: UpstreamClientOptions['onFailure'];
  private readonly onAttempt: UpstreamClientOptions['onAttempt'];
  private readonly breaker: CircuitBreaker | null;
  private readonly gate: ConcurrencyGate;
  private readonly fairShare: FairShare | null;
  private closed = false;

  constructor(options: UpstreamClientOptions) {
    const base = new URL(options.baseUrl);
    this.origin = base.origin;
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.timeoutMs = timeoutMs;
    this.timeZone = options.timeZone ?? 'UTC';
    this.onRecordDropped = options.onRecordDropped;
    this.ownsDispatcher = options.dispatcher === undefined;
    const poolSettings: PoolSettings = {
      connections: options.connections ?? 64,
      timeoutMs,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      maxResponseBytes: options.maxResponseBytes ?? 16 * 1024 * 1024,
    };
    this.dispatcher = options.dispatcher ?? createUpstreamPool(this.origin, poolSettings);
    // A streamed body is never buffered, so its pool has no answer cap (-1: undici's "none").
    this.streamPoolSettings = this.ownsDispatcher ? { ...poolSettings, maxResponseBytes: -1 } : null;
    this.target = { dispatcher: this.dispatcher, origin: this.origin, timeoutMs };
    this.retries = options.retries ?? 2;
    this.retryPolicy = {
      baseDelayMs: options.retryBaseDelayMs ?? 100,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 2_000,
    };
    this.onCall = options.onCall;
    this.onFailure = options.onFailure;
    this.onAttempt = options.onAttempt;
    this.breaker = options.circuitBreaker === false ? null : new CircuitBreaker(options.circuitBreaker);
    this.gate = new ConcurrencyGate({
      maxConcurrent: options.maxConcurrent ?? options.connections ?? 64,
      ...(options.maxQueued !== undefined ? { maxQueued: options.maxQueued } : {}),
    });
    const perCredential =
      options.concurrencyPerCredential ??
      Math.max(1, Math.floor((options.maxConcurrent ?? options.connections ?? 64) / 4));
    this.fairShare = perCredential > 0 ? new FairShare(perCredential, options.maxQueued ?? 1000) : null;
  }

  /** State of this origin's circuit (`closed` when the breaker is off). */
  get circuitState(): CircuitState {
    return this.breaker?.state ?? 'closed';
  }

  /** Calls in flight and waiting (metrics). */
  get load(): { active: number; queued: number } {
    return { active: this.gate.active, queued: this.gate.queued };
  }

  /**
   * Sends one call and returns the parsed JSON body of a 2xx answer.
   * GET is retried on connection errors and on 429/503 whose Retry-After fits `maxRetryAfterMs`.
   * @throws UpstreamError for transport failures, 401/403/404/429/5xx and unparseable bodies
   * @throws UpstreamRejection for statuses listed in `passThroughStatuses`
   */
  request<T>(req: UpstreamRequest): Promise<T> {
    return this.run(req, (answered) => exchange<T>(this.target, req, answered));
  }

  /**
   * Sends one call and answers its 2xx as a stream (http-stream.ts): admission, the breaker, retries
   * of a GET and the failures up to the headers are those of {@link request}; the caller's share and
   * the concurrency slot are given back once the headers arrive, so a long download holds neither.
   * Streams use a pool of their own without `maxResponseBytes` (nothing is buffered).
   * @throws UpstreamError, UpstreamRejection as {@link request}, before the body starts
   */
  stream(req: UpstreamRequest, options: StreamOptions): Promise<UpstreamStream> {
    return this.run(req, (answered) => streamExchange(this.streamingTarget(), req, options, answered));
  }

  /**
   * Runs `send` with the caller's share, the gate, the breaker and retries of idempotent reads, all in
   * this one async function: a call waiting on the upstream holds one suspended frame here, not one per
   * step (each is heap the young generation's scavenges copy while the call waits). Both bounds are
   * taken synchronously when they have room, as nearly every call finds them (no promise and no turn of
   * the event loop each); only a full share or gate, or an aborted signal, waits in their queues.
   */
  private async run<T>(req: UpstreamRequest, send: Send<T>): Promise<T> {
    const maxAttempts = req.method === 'GET' ? this.retries + 1 : 1;
    const share = this.fairShare;
    for (let attempt = 1; ; attempt++) {
      let lane: Lane | null = null;
      let holdsSlot = false;
      let failure: unknown;
      try {
        lane = share && (share.tryEnter(req.credentials) ?? (await this.enterShare(share, req)));
        if (!this.gate.tryAcquire(req.signal)) await this.acquireGate(req.signal);
        holdsSlot = true;
        const admission = this.breaker ? this.breaker.admit() : ADMITTED;
        if (!admission.admitted) throw circuitOpen(admission.retryAfterMs);
        // One info object for both observers, made only when one listens.
        const info = this.onAttempt || this.onCall ? { method: req.method, path: req.path, attempt } : null;
        const finish = info && this.onAttempt?.(info);
        let status: number | undefined;
        try {
          if (info) this.onCall?.(info);
          const result = await send((answered) => {
            status = answered;
          });
          this.breaker?.record('success', admission.probe);
          finish?.(status === undefined ? {} : { status });
          return result;
        } catch (error) {
          this.breaker?.record(breakerOutcome(error, status), admission.probe);
          finish?.(failedOutcome(status, error));
          throw error;
        }
      } catch (error) {
        failure = error;
      } finally {
        // Given back before a retry waits, as before the call is answered.
        if (holdsSlot) this.gate.release();
        if (lane) share?.leave(lane);
      }
      const retryDelay = attempt < maxAttempts ? retryDelayFor(failure, attempt, this.retryPolicy) : null;
      if (retryDelay === null) throw this.report(req, failure);
      await sleep(retryDelay, undefined, req.signal ? { signal: req.signal } : undefined).catch(() => {
        throw this.report(req, abortError(req.signal));
      });
    }
  }

  private streamingTarget(): ExchangeTarget {
    if (this.streamPoolSettings === null) return this.target;
    this.streamTarget ??= {
      dispatcher: createUpstreamPool(this.origin, this.streamPoolSettings),
      origin: this.origin,
      timeoutMs: this.timeoutMs,
    };
    return this.streamTarget;
  }

  /** Reports a record left out of an answer because it could not be read (see conversation-record.ts). */
  reportDroppedRecord(info: { path: string; index: number | null; reason: string }): void {
    this.onRecordDropped?.(info);
  }

  /** GET /alive: true when the service answers 200. Never throws. */
  async isAlive(signal?: AbortSignal): Promise<boolean> {
    try {
      const response = await this.dispatcher.request({
        origin: this.origin,
        method: 'GET',
        path: '/alive',
        signal,
        headersTimeout: 2_000,
        bodyTimeout: 2_000,
      });
      await response.body.dump();
      return response.statusCode === 200;
    } catch {
      return false;
    }
  }

  /** Closes the pool (when this client created it). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsDispatcher) await this.dispatcher.close();
    if (this.streamTarget) await this.streamTarget.dispatcher.close();
  }

  /** Waits for the caller's share (it has calls in flight up to its bound), or refuses with a code. */
  private enterShare(share: FairShare, req: UpstreamRequest) {
    return share.enter(req.credentials, req.signal, (reason) =>
      reason === 'queue-full' ? credentialOverloaded() : abortError(req.signal),
    );
  }

  /** Waits for a slot of the gate (all are taken, or the signal aborted), or refuses with a code. */
  private async acquireGate(signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.gate.acquire(signal);
    } catch (error) {
      if (error instanceof GateRefusal && error.reason === 'queue-full') throw gatewayOverloaded();
      throw abortError(signal);
    }
  }

  private report(req: UpstreamRequest, error: unknown): unknown {
    if (error instanceof UpstreamError) {
      const status = error.extensions.status;
      this.onFailure?.({
        method: req.method,
        path: req.path,
        code: error.code,
        ...(typeof status === 'number' ? { status } : {}),
      });
    }
    return error;
  }
}

/** What the onAttempt finisher of a failed attempt receives: the status and code it has, no more keys. */
function failedOutcome(status: number | undefined, error: unknown): UpstreamAttemptOutcome {
  const outcome: UpstreamAttemptOutcome = {};
  if (status !== undefined) outcome.status = status;
  if (error instanceof UpstreamError) outcome.code = error.code;
  return outcome;
}
