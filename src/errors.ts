/**
 * The error catalogue: every `extensions.code` a client can see, with what it means, the HTTP status
 * it travels with (when it refuses a whole request; `null` when it only marks a field or ends a stream)
 * and the default message. The code tables of docs/errors.md list exactly these codes
 * (test/gateway/error-catalogue.test.ts), so a new code starts here.
 *
 * Only `graphql` is imported: every layer (schema, gateway, upstream) may use this module.
 */
import { GraphQLError, type GraphQLErrorOptions } from 'graphql';

export interface ErrorEntry {
  readonly meaning: string;
  readonly status: number | null;
  readonly message: string;
}

export const ERROR_CATALOGUE = {
  // Request-level problems (channel 2).
  BAD_USER_INPUT: {
    meaning: 'a malformed argument, id, cursor or variable',
    status: 400,
    message: 'Bad input.',
  },
  UNAUTHENTICATED: {
    meaning: 'a malformed Authorization, or the conversation service answered 401',
    status: 401,
    message: 'The conversation service refused the credentials.',
  },
  FORBIDDEN: {
    meaning: 'the conversation service answered 403',
    status: null,
    message: 'The conversation service denied access.',
  },
  PERMISSION_DENIED: {
    meaning: 'a lifecycle mutation on a conversation of someone else',
    status: null,
    message: 'You can only change your own conversations.',
  },
  QUERY_LIMIT_EXCEEDED: {
    meaning: 'a query limit (depth, cost, aliases, ...)',
    status: 400,
    message: 'The query exceeds a limit.',
  },
  PAYLOAD_TOO_LARGE: {
    meaning: 'the request body exceeds MAX_BODY_BYTES',
    status: 413,
    message: 'The request body is too large.',
  },
  LENGTH_REQUIRED: {
    meaning: 'a POST body sent without Content-Length (chunked)',
    status: 411,
    message: 'Send the request body with a Content-Length.',
  },
  BAD_REQUEST: {
    meaning: 'a malformed `variables` or `extensions` query parameter on GET',
    status: 400,
    message: 'The request is malformed.',
  },
  CSRF_REJECTED: {
    meaning: 'a form or text POST without a preflight-forcing header (CSRF prevention)',
    status: 403,
    message: 'Send a "graphql-preflight: 1" header with this content type.',
  },
  ORIGIN_REJECTED: {
    meaning: 'a browser Origin not in CORS_ORIGINS',
    status: 403,
    message: 'This origin is not allowed.',
  },
  HOST_REJECTED: {
    meaning: 'a Host header not in ALLOWED_HOSTS (DNS rebinding guard)',
    status: 403,
    message: 'This host is not allowed.',
  },
  BATCHING_NOT_SUPPORTED: {
    meaning: 'a JSON array (batched operations) sent to the endpoint',
    status: 400,
    message: 'Batched operations are not supported.',
  },
  REQUEST_TIMEOUT: {
    meaning: 'the request headers or body arrived too slowly',
    status: 408,
    message: 'The request took too long to arrive.',
  },
  RATE_LIMITED: {
    meaning: 'the gateway rate limit or an upstream 429 (with extensions.retryAfterSeconds)',
    status: 429,
    message: 'Too many requests.',
  },
  TOO_MANY_STREAMS: {
    meaning:
      'more sockets or SSE streams for one credential than MAX_STREAMS_PER_CREDENTIAL (socket close code 4429)',
    status: 429,
    message: 'Too many streams for this credential.',
  },
  TOO_MANY_SUBSCRIPTIONS: {
    meaning: 'more operations at once on one graphql-ws connection than allowed',
    status: null,
    message: 'Too many operations on this connection.',
  },
  PERSISTED_QUERY_ONLY: {
    meaning: 'a document sent while only persisted operations are allowed',
    status: 400,
    message: 'Only persisted operations are allowed.',
  },
  PERSISTED_QUERY_NOT_IN_LIST: {
    meaning: 'a persisted operation id not in PERSISTED_OPERATIONS_FILE',
    status: 400,
    message: 'This persisted operation is not in the allow-list.',
  },
  PERSISTED_QUERY_NOT_FOUND: {
    meaning: 'an automatic persisted query hash the gateway does not know (send the document with it)',
    status: 200,
    message: 'PersistedQueryNotFound',
  },
  PERSISTED_QUERY_NOT_SUPPORTED: {
    meaning: 'automatic persisted queries are off (APQ_MAX_ENTRIES 0)',
    status: 200,
    message: 'PersistedQueryNotSupported',
  },
  PERSISTED_QUERY_HASH_MISMATCH: {
    meaning: 'the sent document does not hash to the sent sha256Hash',
    status: 400,
    message: 'The persisted query hash is not the sha256 of the query.',
  },
  PERSISTED_QUERY_INVALID: {
    meaning: 'a malformed persistedQuery extension',
    status: 400,
    message: 'Invalid persistedQuery extension.',
  },
  GATEWAY_SHUTTING_DOWN: {
    meaning: 'the gateway is stopping: new work is refused, open streams end',
    status: 503,
    message: 'The gateway is shutting down; reconnect shortly.',
  },
  WORKSPACE_PATH_REFUSED: {
    meaning:
      "a workspace path the gateway will not pass on: absolute, with '..', a control character or a backslash, or inside a repository's .git folder (extensions.argument names it); no upstream call is made",
    status: null,
    message: 'This workspace path is not allowed.',
  },
  WORKSPACE_NOT_RUNNING: {
    meaning:
      "the conversation's sandbox or runtime is not running (extensions.reason: PAUSED, STOPPED, STARTING): resume it with startConversation, then read again; the gateway never resumes it for a read",
    status: null,
    message: "The conversation's workspace is not running; start the conversation to read it.",
  },
  NOT_ON_THIS_API: {
    meaning:
      "the connected upstream's API has no such thing (extensions.api names the API, e.g. commits on V0)",
    status: null,
    message: 'The connected conversation service does not offer this.',
  },
  ARCHIVE_LINK_INVALID: {
    meaning: 'a workspace archive link that is malformed, altered, or signed for another caller',
    status: 403,
    message: 'This archive link is not valid.',
  },
  ARCHIVE_LINK_EXPIRED: {
    meaning: 'a workspace archive link past its expiry; ask the graph for a new one',
    status: 410,
    message: 'This archive link has expired.',
  },
  // Upstream failures (channel 3).
  UPSTREAM_UNAVAILABLE: {
    meaning: 'refused connection, 502/503, open circuit or too many queued calls (extensions.reason)',
    status: null,
    message: 'The conversation service is unavailable.',
  },
  UPSTREAM_TIMEOUT: {
    meaning: 'an upstream attempt not finished within UPSTREAM_TIMEOUT_MS, or 504',
    status: null,
    message: 'The conversation service did not answer in time.',
  },
  UPSTREAM_ERROR: {
    meaning: 'other upstream failure or an unreadable answer (extensions.status)',
    status: null,
    message: 'The call to the conversation service failed.',
  },
  OPERATION_TIMEOUT: {
    meaning: 'the operation exceeded OPERATION_TIMEOUT_MS across attempts, retries and pages',
    status: null,
    message: 'The operation took too long.',
  },
  REQUEST_CANCELLED: {
    meaning: 'the client cancelled the request',
    status: null,
    message: 'The request was cancelled.',
  },
  UPSTREAM_VALIDATION: {
    meaning: 'the upstream refused the input with a 422 (UpstreamValidationError union member)',
    status: null,
    message: 'The conversation service refused the input.',
  },
  UPSTREAM_ROUTE_MISSING: {
    meaning:
      'the connected conversation service lacks a route the operation needs (an older server: web UI page, 404 or 405; extensions.route names it)',
    status: null,
    message: 'The conversation service does not offer what this operation needs.',
  },
  UPSTREAM_REFUSED: {
    meaning:
      'the upstream refused with a 4xx and a readable reason (UpstreamDomainError union member; as a field error, extensions.msgId when the upstream gave a reason id)',
    status: null,
    message: 'The conversation service refused the request.',
  },
  // Live streams and talking back.
  CONVERSATION_NOT_FOUND: {
    meaning: 'no such conversation for this caller',
    status: null,
    message: 'No conversation with this id.',
  },
  CONVERSATION_UNREACHABLE: {
    meaning: 'the upstream socket dropped and stayed unreachable, or a catch-up could not read stored events',
    status: null,
    message: 'The conversation cannot be reached.',
  },
  UPSTREAM_TOO_MANY_CONNECTIONS: {
    meaning:
      "the conversation's agent server refused another socket (close 1013: its per-conversation cap, V1 only); subscribe again later",
    status: null,
    message: 'The conversation has too many live connections upstream.',
  },
  CONVERSATION_DELETED: {
    meaning: 'the conversation was deleted',
    status: null,
    message: 'The conversation was deleted.',
  },
  CONVERSATION_STOPPED: {
    meaning: 'its agent was stopped',
    status: null,
    message: 'The conversation was stopped.',
  },
  SUBSCRIBER_TOO_SLOW: {
    meaning: 'this subscriber fell more than maxBufferedEvents behind',
    status: null,
    message: 'The subscriber fell too far behind.',
  },
  // Anything else is a bug.
  INTERNAL_SERVER_ERROR: {
    meaning: 'a bug; the detail is only in the log',
    status: 500,
    message: 'Unexpected error.',
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Every code, for checks such as the docs test (test/gateway/error-catalogue.test.ts). */
export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/** Codes that refuse a whole request: their catalogue entry has an HTTP status. */
export type RefusalCode = {
  [K in ErrorCode]: (typeof ERROR_CATALOGUE)[K]['status'] extends number ? K : never;
}[ErrorCode];

/** The HTTP status a refusal travels with, from the catalogue. */
export function refusalStatus(code: RefusalCode): number {
  return ERROR_CATALOGUE[code].status;
}

/** Options of {@link codedError}. */
export interface CodedErrorOptions {
  /** What the client reads. @default the catalogue's message */
  message?: string;
  /** Extensions beside `code` (`limit`, `retryAfterSeconds`, `reason`, ...). */
  extensions?: Record<string, unknown>;
  /**
   * The error refuses the whole request: Yoga answers with the catalogue's HTTP status (and these
   * headers). Only for codes that have one.
   */
  refuses?: true | { headers: Record<string, string> };
  /** The parts of the document the error points at. */
  nodes?: GraphQLErrorOptions['nodes'];
}

/**
 * A GraphQLError with `extensions.code`: the one way a client-visible code is built (a code is typed
 * from the catalogue, so a new one starts there). One constructor taking the code rather than one per
 * code: the sites differ in message detail, extra extensions, HTTP status and AST nodes, and each such
 * combination would otherwise need its own function.
 */
export function codedError(code: ErrorCode, options: CodedErrorOptions = {}): GraphQLError {
  const { message = ERROR_CATALOGUE[code].message, extensions = {}, refuses, nodes } = options;
  const status = ERROR_CATALOGUE[code].status;
  const http =
    refuses && status !== null
      ? { http: refuses === true ? { status } : { status, headers: refuses.headers } }
      : {};
  return new GraphQLError(message, {
    ...(nodes ? { nodes } : {}),
    extensions: { code, ...extensions, ...http },
  });
}

/** The JSON body of a refusal answered outside GraphQL execution (HTTP guards, WebSocket handshakes). */
export function refusalBody(code: RefusalCode, message: string = ERROR_CATALOGUE[code].message): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}

/**
 * The same error with another message, everything else kept (graphql-jit's errors have a read-only
 * `message`, so it cannot be edited in place). A plain Error becomes an uncoded GraphQLError.
 */
export function withMessage(error: Error, message: string): GraphQLError {
  if (!(error instanceof GraphQLError)) return new GraphQLError(message);
  return new GraphQLError(message, {
    nodes: error.nodes ?? null,
    source: error.source ?? null,
    positions: error.positions ?? null,
    path: error.path ?? null,
    originalError: error.originalError ?? null,
    extensions: error.extensions ?? null,
  });
}

/**
 * A document that could not be read at all on graphql-ws (not a string, or a parser failure that is
 * not a GraphQLError). Uncoded, like graphql-js's own syntax errors.
 */
export function unreadableDocument(): GraphQLError {
  return new GraphQLError('Syntax Error: unreadable document.');
}

/** BAD_USER_INPUT; `withStatus` makes it refuse the whole operation with HTTP 400. */
export function badUserInput(message: string, withStatus = false): GraphQLError {
  return codedError('BAD_USER_INPUT', withStatus ? { message, refuses: true } : { message });
}

/** UNAUTHENTICATED with HTTP 401. */
export function unauthenticated(message: string): GraphQLError {
  return codedError('UNAUTHENTICATED', { message, refuses: true });
}

/** The one shutting-down message, wherever the gateway refuses or ends work because it is stopping. */
export const SHUTTING_DOWN_MESSAGE = ERROR_CATALOGUE.GATEWAY_SHUTTING_DOWN.message;

/** GATEWAY_SHUTTING_DOWN with HTTP 503. */
export function shuttingDown(): GraphQLError {
  return codedError('GATEWAY_SHUTTING_DOWN', { refuses: true });
}

/**
 * GATEWAY_SHUTTING_DOWN as the last result of a subscription the drain ends, whichever path delivers
 * it (a stream or a live group): no HTTP status, the stream's answer began long before.
 */
export function streamEndedByShutdown(): GraphQLError {
  return codedError('GATEWAY_SHUTTING_DOWN');
}

/** TOO_MANY_SUBSCRIPTIONS on one graphql-ws connection. */
export function tooManySubscriptions(maxOperations: number): GraphQLError {
  return codedError('TOO_MANY_SUBSCRIPTIONS', {
    message: `At most ${maxOperations} operations may run at once on one connection.`,
  });
}
