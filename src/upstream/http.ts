/**
 * The one HTTP client of the gateway towards the conversation service.
 *
 * Owns the undici pool (keep-alive, explicit timeouts), forwards the caller's credentials, retries
 * idempotent reads on connection errors and honours Retry-After, and is the single place where
 * upstream and transport failures become coded errors. Nothing here ever copies an upstream body or a
 * header value into an error message: upstream bodies may echo input (including secrets).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GraphQLError } from 'graphql';
import { type Dispatcher, Pool } from 'undici';
import { ERROR_CATALOGUE, type ErrorCode } from '../errors.ts';
import { AttemptDeadline } from './attempt-deadline.ts';
import {
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitState,
  ConcurrencyGate,
  GateRefusal,
} from './circuit-breaker.ts';
import { FairShare } from './fair-share.ts';

/** How the caller authenticates; forwarded upstream in the same form. */
export type UpstreamCredentials =
  | { kind: 'session-api-key'; key: string }
  | { kind: 'bearer'; token: string }
  | { kind: 'none' };

/** Codes of channel 3 (upstream and transport failures) plus UNAUTHENTICATED from a 401. */
export type UpstreamErrorCode = Extract<
  ErrorCode,
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_UNAVAILABLE'
  | 'RATE_LIMITED'
  | 'REQUEST_CANCELLED'
  | 'OPERATION_TIMEOUT'
>;

/**
 * Why an UPSTREAM_UNAVAILABLE was decided by the gateway itself, without calling the upstream
 * (`extensions.reason`): the circuit is open, or too many calls are already waiting.
 */
export type GatewayRefusalReason = 'CIRCUIT_OPEN' | 'GATEWAY_OVERLOADED';

/** A coded failure of an upstream call. Visible to clients (Yoga does not mask GraphQLErrors). */
export class UpstreamError extends GraphQLError {
  readonly code: UpstreamErrorCode;
  constructor(
    code: UpstreamErrorCode,
    message: string = ERROR_CATALOGUE[code].message,
    extra: { status?: number; retryAfterSeconds?: number; reason?: GatewayRefusalReason } = {},
  ) {
    super(message, { extensions: { code, ...extra } });
    this.name = 'UpstreamError';
    this.code = code;
  }
}

/** A non-2xx answer the caller of `request` wants to interpret itself (e.g. 400/422 of create). */
export class UpstreamRejection extends Error {
  constructor(
    readonly status: number,
    /** The parsed body; may echo caller input, so it must never reach a log or message verbatim. */
    readonly body: unknown,
  ) {
    super(`upstream answered ${status}`);
    this.name = 'UpstreamRejection';
  }
}

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

/** One upstream call. */
export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path with query already encoded. */
  path: string;
  credentials: UpstreamCredentials;
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** Status codes handed back as {@link UpstreamRejection} instead of being mapped here. */
  passThroughStatuses?: readonly number[];
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const TIMEOUT_ERROR_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The undici-backed client. One per gateway; shared by all callers (it holds no caller state). */
export class UpstreamClient {
  readonly origin: string;
  /** IANA zone the upstream's zone-less timestamps are read in (see timestamps.ts). */
  readonly timeZone: string;
  private readonly timeoutMs: number;
  private readonly onRecordDropped: UpstreamClientOptions['onRecordDropped'];
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly retries: number;
  private readonly retryBaseDelayMs: number;
  private readonly maxRetryAfterMs: number;
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
    this.dispatcher =
      options.dispatcher ??
      new Pool(this.origin, {
        connections: options.connections ?? 64,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        connectTimeout: options.connectTimeoutMs ?? 5_000,
        keepAliveTimeout: 30_000,
        pipelining: 1,
        maxResponseSize: options.maxResponseBytes ?? 16 * 1024 * 1024,
      });
    this.retries = options.retries ?? 2;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 100;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 2_000;
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
  async request<T>(req: UpstreamRequest): Promise<T> {
    const idempotent = req.method === 'GET';
    const maxAttempts = idempotent ? this.retries + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        // Each attempt first waits for its caller's share, then for the shared gate (fair-share.ts).
        const run = () => this.attempt<T>(req, attempt);
        return await (this.fairShare
          ? this.fairShare.run(req.credentials, req.signal, run, (reason) =>
              reason === 'queue-full' ? credentialOverloaded() : abortError(req.signal),
            )
          : run());
      } catch (error) {
        const retryDelay = attempt < maxAttempts ? this.retryDelayFor(error, attempt) : null;
        if (retryDelay === null) throw this.report(req, error);
        await sleep(retryDelay, undefined, req.signal ? { signal: req.signal } : undefined).catch(() => {
          throw this.report(req, abortError(req.signal));
        });
      }
    }
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
  }

  /** One attempt through the concurrency gate and the circuit breaker, instrumented. */
  private async attempt<T>(req: UpstreamRequest, attempt: number): Promise<T> {
    let release: () => void;
    try {
      release = await this.gate.acquire(req.signal);
    } catch (error) {
      if (error instanceof GateRefusal && error.reason === 'queue-full') {
        throw new UpstreamError(
          'UPSTREAM_UNAVAILABLE',
          'The gateway has too many calls waiting for the conversation service.',
          {
            reason: 'GATEWAY_OVERLOADED',
            retryAfterSeconds: 1,
          },
        );
      }
      throw abortError(req.signal);
    }
    try {
      const admission = this.breaker?.admit() ?? { admitted: true, probe: false };
      if (!admission.admitted) {
        throw new UpstreamError(
          'UPSTREAM_UNAVAILABLE',
          'The conversation service is failing; the gateway is not calling it for now.',
          {
            reason: 'CIRCUIT_OPEN',
            retryAfterSeconds: Math.max(1, Math.ceil(admission.retryAfterMs / 1000)),
          },
        );
      }
      const finish = this.onAttempt?.({ method: req.method, path: req.path, attempt });
      let status: number | undefined;
      try {
        const result = await this.send<T>(req, attempt, (answered) => {
          status = answered;
        });
        this.breaker?.record('success', admission.probe);
        finish?.({ ...(status !== undefined ? { status } : {}) });
        return result;
      } catch (error) {
        this.breaker?.record(breakerOutcome(error, status), admission.probe);
        const code = error instanceof UpstreamError ? error.code : undefined;
        finish?.({ ...(status !== undefined ? { status } : {}), ...(code ? { code } : {}) });
        throw error;
      }
    } finally {
      release();
    }
  }

  private async send<T>(
    req: UpstreamRequest,
    attempt: number,
    answered: (status: number) => void,
  ): Promise<T> {
    this.onCall?.({ method: req.method, path: req.path, attempt });
    const headers: Record<string, string> = { accept: 'application/json' };
    if (req.credentials.kind === 'session-api-key') headers['x-session-api-key'] = req.credentials.key;
    else if (req.credentials.kind === 'bearer') headers.authorization = `Bearer ${req.credentials.token}`;
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    // One deadline for connect, headers and the whole body (undici's own timeouts bound idle gaps).
    const deadline = new AttemptDeadline(req.signal, this.timeoutMs, attemptTimeout);
    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      try {
        response = await this.dispatcher.request({
          origin: this.origin,
          method: req.method,
          path: req.path,
          headers,
          body,
          signal: deadline.signal,
        });
      } catch (error) {
        throw mapTransportError(error, deadline.signal);
      }
      answered(response.statusCode);
      try {
        text = await response.body.text();
      } catch (error) {
        throw mapTransportError(error, deadline.signal);
      }
    } finally {
      deadline.dispose();
    }
    const status = response.statusCode;
    if (status >= 200 && status < 300) return parseJson<T>(text, status);
    if (req.passThroughStatuses?.includes(status)) {
      throw new UpstreamRejection(status, safeParse(text));
    }
    throw mapStatus(status, response.headers['retry-after']);
  }

  /** How long to wait before retrying, or null when this failure is not retried. */
  private retryDelayFor(error: unknown, attempt: number): number | null {
    if (!(error instanceof UpstreamError)) return null;
    // Decided by the gateway itself (open circuit, full queue): retrying at once would only add load.
    if (error.extensions.reason !== undefined) return null;
    const backoff = this.retryBaseDelayMs * 2 ** (attempt - 1);
    if (error.code === 'UPSTREAM_UNAVAILABLE' && error.extensions.status === undefined) return backoff;
    if (error.code === 'RATE_LIMITED' || error.code === 'UPSTREAM_UNAVAILABLE') {
      const retryAfter = error.extensions.retryAfterSeconds;
      const delay = typeof retryAfter === 'number' ? retryAfter * 1000 : backoff;
      return delay <= this.maxRetryAfterMs ? delay : null;
    }
    return null;
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

function attemptTimeout(): UpstreamError {
  return new UpstreamError('UPSTREAM_TIMEOUT');
}

function parseJson<T>(text: string, status: number): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UpstreamError('UPSTREAM_ERROR', 'The conversation service sent an unreadable answer.', {
      status,
    });
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Retry-After as seconds: either delta-seconds or an HTTP date. */
function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function mapStatus(status: number, retryAfterHeader: string | string[] | undefined): UpstreamError {
  if (status === 401) {
    return new UpstreamError('UNAUTHENTICATED', 'The conversation service refused the session API key.', {
      status,
    });
  }
  if (status === 403) {
    return new UpstreamError('FORBIDDEN', undefined, { status });
  }
  if (status === 429) {
    const retryAfterSeconds = parseRetryAfter(retryAfterHeader) ?? 1;
    return new UpstreamError(
      'RATE_LIMITED',
      `The conversation service is rate limiting; retry after ${retryAfterSeconds} s.`,
      { status, retryAfterSeconds },
    );
  }
  if (status === 504) {
    return new UpstreamError('UPSTREAM_TIMEOUT', 'The conversation service timed out.', { status });
  }
  if (status === 502 || status === 503) {
    const retryAfterSeconds = parseRetryAfter(retryAfterHeader);
    return new UpstreamError('UPSTREAM_UNAVAILABLE', undefined, {
      status,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    });
  }
  return failedWithStatus(status);
}

/** UPSTREAM_ERROR for a status nobody interpreted: the status, never the body. */
export function failedWithStatus(status: number): UpstreamError {
  return new UpstreamError('UPSTREAM_ERROR', `The conversation service failed (HTTP ${status}).`, { status });
}

/** UPSTREAM_ERROR for a 2xx answer whose body is not what the route answers. */
export function unexpectedAnswer(): UpstreamError {
  return new UpstreamError('UPSTREAM_ERROR', 'The conversation service sent an unexpected answer.');
}

/**
 * The error for an aborted call: the signal's reason when it is already a coded error (the operation
 * deadline aborts with OPERATION_TIMEOUT), otherwise REQUEST_CANCELLED (the client went away).
 */
function abortError(signal: AbortSignal | undefined): UpstreamError {
  const reason: unknown = signal?.reason;
  if (reason instanceof UpstreamError) return reason;
  return new UpstreamError('REQUEST_CANCELLED');
}

/** One caller has `maxQueued` calls waiting for its share (fair-share.ts): refused like a full gate queue. */
function credentialOverloaded(): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_UNAVAILABLE',
    'This caller has too many calls waiting for the conversation service.',
    {
      reason: 'GATEWAY_OVERLOADED',
      retryAfterSeconds: 1,
    },
  );
}

/** Whether an attempt's failure says the upstream is unwell (counts towards opening the circuit). */
function breakerOutcome(error: unknown, status: number | undefined): 'failure' | 'neutral' | 'success' {
  if (status !== undefined && status >= 300 && status < 500 && status !== 429) {
    return 'success'; // a 4xx (also one handed back as UpstreamRejection): the upstream is healthy
  }
  if (!(error instanceof UpstreamError)) return 'neutral';
  if (error.code === 'REQUEST_CANCELLED' || error.code === 'OPERATION_TIMEOUT') return 'neutral';
  if (status === undefined) return 'failure'; // no answer: refused, reset, timed out
  if (status >= 500) return 'failure';
  if (status === 429) return 'neutral';
  return 'failure'; // 5xx, or an unreadable 2xx body
}

function mapTransportError(error: unknown, signal: AbortSignal | undefined): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (signal?.aborted) return abortError(signal);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUT_ERROR_CODES.has(code)) {
    return new UpstreamError('UPSTREAM_TIMEOUT');
  }
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) {
    return new UpstreamError('UPSTREAM_UNAVAILABLE', 'The conversation service cannot be reached.');
  }
  // Anything else from the transport is still an upstream failure, never a crash; no detail is copied
  // because undici messages can include the target address.
  return new UpstreamError('UPSTREAM_ERROR');
}
