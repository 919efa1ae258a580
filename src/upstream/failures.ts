/**
 * The one place where upstream and transport failures become coded errors (channel 3 of the error
 * contract): HTTP statuses, undici's transport errors, aborts, unreadable answers and the gateway's
 * own refusals (open circuit, full queues). Nothing here ever copies an upstream body or a header value
 * into an error message: upstream bodies may echo input (including secrets).
 */
import { GraphQLError } from 'graphql';
import { ERROR_CATALOGUE, type ErrorCode } from '../errors.ts';

/** Codes of channel 3 (upstream and transport failures) plus UNAUTHENTICATED from a 401. */
export type UpstreamErrorCode = Extract<
  ErrorCode,
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_ROUTE_MISSING'
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
type GatewayRefusalReason = 'CIRCUIT_OPEN' | 'GATEWAY_OVERLOADED';

/** A coded failure of an upstream call. Visible to clients (Yoga does not mask GraphQLErrors). */
export class UpstreamError extends GraphQLError {
  readonly code: UpstreamErrorCode;
  constructor(
    code: UpstreamErrorCode,
    message: string = ERROR_CATALOGUE[code].message,
    extra: {
      status?: number;
      retryAfterSeconds?: number;
      reason?: GatewayRefusalReason;
      /** UPSTREAM_ROUTE_MISSING: the route the upstream lacks, as `METHOD /path/{param}`. */
      route?: string;
    } = {},
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

/** The attempt's own deadline ran out (attempt-deadline.ts). */
export function attemptTimeout(): UpstreamError {
  return new UpstreamError('UPSTREAM_TIMEOUT');
}

/** UPSTREAM_ERROR for a 2xx answer whose body is not JSON. */
export function unreadableAnswer(status: number): UpstreamError {
  return new UpstreamError('UPSTREAM_ERROR', 'The conversation service sent an unreadable answer.', {
    status,
  });
}

/**
 * UPSTREAM_ROUTE_MISSING: the upstream does not serve `route` (`METHOD /path/{param}`, never ids or a
 * query). An app server answers a GET it has no route for with its web UI's page (200 text/html), any
 * other method with 405; a plain FastAPI server says 404 `Not Found`. Any of these means "an older or
 * other API", which a client can act on (upgrade the service or pick the other API), unlike a parse
 * error or a 500.
 */
export function routeMissing(route: string, status: number): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_ROUTE_MISSING',
    `The conversation service does not offer ${route} (it answered HTTP ${status}${
      status >= 200 && status < 300 ? ' with a web page' : ''
    }); it may be an older release or speak the other OpenHands API.`,
    { status, route },
  );
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

/** The coded error of a non-2xx answer nobody asked to interpret itself. */
export function mapStatus(status: number, retryAfterHeader: string | string[] | undefined): UpstreamError {
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
export function abortError(signal: Pick<AbortSignal, 'reason'> | undefined): UpstreamError {
  const reason: unknown = signal?.reason;
  if (reason instanceof UpstreamError) return reason;
  return new UpstreamError('REQUEST_CANCELLED');
}

/** The shared concurrency gate's queue is full (circuit-breaker.ts). */
export function gatewayOverloaded(): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_UNAVAILABLE',
    'The gateway has too many calls waiting for the conversation service.',
    {
      reason: 'GATEWAY_OVERLOADED',
      retryAfterSeconds: 1,
    },
  );
}

/** One caller has `maxQueued` calls waiting for its share (fair-share.ts): refused like a full gate queue. */
export function credentialOverloaded(): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_UNAVAILABLE',
    'This caller has too many calls waiting for the conversation service.',
    {
      reason: 'GATEWAY_OVERLOADED',
      retryAfterSeconds: 1,
    },
  );
}

/** The circuit of this origin is open: refused without calling, retry once it may let a probe through. */
export function circuitOpen(retryAfterMs: number): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_UNAVAILABLE',
    'The conversation service is failing; the gateway is not calling it for now.',
    {
      reason: 'CIRCUIT_OPEN',
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    },
  );
}

/** A failure of the transport (no answer, or a broken body) as a coded error. */
export function mapTransportError(
  error: unknown,
  signal: Pick<AbortSignal, 'aborted' | 'reason'> | undefined,
): UpstreamError {
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
