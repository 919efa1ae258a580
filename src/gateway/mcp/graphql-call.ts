/**
 * How the MCP endpoint runs GraphQL: every tool, resource read and resource subscription is one
 * request to the gateway's own Yoga (`yoga.fetch`, in process) carrying the MCP caller's credential
 * headers, so the GraphQL path's checks, limits, costs, tenancy and error codes apply unchanged.
 * Subscriptions are read over SSE (Yoga's `text/event-stream` answer); aborting the signal closes the
 * stream, which detaches the live subscriber at once.
 */

/** A GraphQL error as the MCP side reads it. */
export interface GraphQLErrorLike {
  message: string;
  extensions?: { code?: string };
}

/** One GraphQL answer (an operation's body, or one subscription result). */
export interface GraphQLAnswer {
  data?: Record<string, unknown> | null;
  errors?: GraphQLErrorLike[];
}

/** One operation to run. */
export interface GraphQLOperation {
  query: string;
  operationName: string;
  variables: Record<string, unknown>;
}

/** Where operations run, and as whom. */
export interface GraphQLCaller {
  /** Runs one GraphQL request in process (Yoga's `fetch`). */
  graphql: (request: Request) => Promise<Response>;
  /** `http://gateway/graphql`-style URL of the GraphQL path. */
  url: string;
  /** The MCP request's credential headers (the ones GraphQL reads). */
  credentials: Headers;
  /**
   * Under an allow-list of persisted operations: the sha256 of each document, sent instead of the
   * document (the route admits its documents to the list). Null: documents are sent as they are.
   */
  hashes: ReadonlyMap<string, string> | null;
}

/** A coded failure: a GraphQL error's `extensions.code` and message. */
export interface CodedFailure {
  code: string;
  message: string;
}

/** The code and message of a GraphQL error (`INTERNAL_SERVER_ERROR` when it carries no code). */
export function failureOf(error: GraphQLErrorLike): CodedFailure {
  return { code: error.extensions?.code ?? 'INTERNAL_SERVER_ERROR', message: error.message };
}

function requestFor(caller: GraphQLCaller, operation: GraphQLOperation, accept: string, signal: AbortSignal) {
  const headers = new Headers(caller.credentials);
  headers.set('content-type', 'application/json');
  headers.set('accept', accept);
  const hash = caller.hashes?.get(operation.query);
  const body = hash
    ? {
        operationName: operation.operationName,
        variables: operation.variables,
        extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
      }
    : operation;
  return new Request(caller.url, { method: 'POST', headers, body: JSON.stringify(body), signal });
}

/** Runs a query or mutation and answers its JSON body. */
export async function runOperation(
  caller: GraphQLCaller,
  operation: GraphQLOperation,
  signal: AbortSignal,
): Promise<GraphQLAnswer> {
  const response = await caller.graphql(requestFor(caller, operation, 'application/json', signal));
  return (await response.json()) as GraphQLAnswer;
}

/** A subscription that GraphQL refused before its first result, or its stream of results. */
export type SubscriptionOpening = { refused: CodedFailure } | { results: AsyncIterable<GraphQLAnswer> };

/**
 * Starts a subscription. Throws only if `signal` aborts before Yoga answers; once open, the results end
 * when the subscription completes, the stream ends, or `signal` aborts (which closes the stream).
 */
export async function openSubscription(
  caller: GraphQLCaller,
  operation: GraphQLOperation,
  signal: AbortSignal,
): Promise<SubscriptionOpening> {
  const response = await caller.graphql(requestFor(caller, operation, 'text/event-stream', signal));
  const body = response.body;
  if (!body || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const answer = (await response.json().catch(() => ({}))) as GraphQLAnswer;
    const first = answer.errors?.[0];
    return {
      refused: first ? failureOf(first) : failureOf({ message: `GraphQL answered ${response.status}.` }),
    };
  }
  return { results: sseResults(body, signal) };
}

/** The `data:` payloads of an SSE stream of GraphQL results, until `event: complete` or the end. */
async function* sseResults(body: ReadableStream, signal: AbortSignal): AsyncGenerator<GraphQLAnswer> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const release = () => {
    reader.cancel().catch(() => {});
  };
  signal.addEventListener('abort', release, { once: true });
  let buffer = '';
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<string>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      if (chunk.done) return;
      buffer += chunk.value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const lines = buffer.slice(0, end).split('\n');
        buffer = buffer.slice(end + 2);
        if (lines.includes('event: complete')) return;
        const data = lines
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (data) yield JSON.parse(data) as GraphQLAnswer;
      }
    }
  } finally {
    signal.removeEventListener('abort', release);
    release();
  }
}
