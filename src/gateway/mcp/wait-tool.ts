/**
 * The `wait_for_agent` tool: blocks until a conversation's agent has finished its turn (its agent state
 * becomes one that waits for the user, or ends), or until a timeout, and answers what happened
 * meanwhile. It is driven by the live bridge, never by polling: it runs the `conversationEvents`
 * subscription through the gateway's own Yoga (`yoga.fetch`, SSE) with the caller's credential headers,
 * so the GraphQL path's checks, limits and tenancy apply, and it shares the conversation's one upstream
 * socket with every other subscriber. Closing the SSE stream (timeout, turn done, the client's
 * cancellation or disconnect) detaches that subscriber.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';

/** Default wait, in seconds: under the 60 s default request timeout of the SDK clients. */
const WAIT_DEFAULT_SECONDS = 50;
/** Longest wait one call may ask for, in seconds. */
const WAIT_MAX_SECONDS = 300;
/** Events summarised in one result at most (the most recent ones; `eventCount` counts them all). */
const WAIT_MAX_EVENTS = 50;
/** Characters of an event's text kept in its summary. */
const WAIT_TEXT_CHARS = 200;
/** While nothing happens, a progress notification at least this often (ms), when asked for. */
const HEARTBEAT_MS = 10_000;

/** Agent states that end the agent's turn. */
const TURN_OVER_STATES = [
  'AWAITING_USER_INPUT',
  'FINISHED',
  'ERROR',
  'STOPPED',
  'AWAITING_USER_CONFIRMATION',
] as const;

export const WAIT_TOOL = {
  name: 'wait_for_agent',
  title: "Wait for the agent's turn",
  description: `Waits until the conversation's agent has finished its turn (its state becomes ${TURN_OVER_STATES.join(', ')}) or \`timeoutSeconds\` pass (1-${WAIT_MAX_SECONDS}, default ${WAIT_DEFAULT_SECONDS}), and answers the events that arrived meanwhile (type, source, short text), the last agent state, and the \`cursor\` to go on from. Pass \`after\` (a cursor from read_events or a previous wait, e.g. taken before send_message) to include everything since it; without it only what happens from now on is seen. Sends progress notifications when the request carries a progressToken.`,
  inputSchema: {
    type: 'object',
    properties: {
      conversationId: { type: 'string' },
      after: { type: 'string' },
      timeoutSeconds: { type: 'integer', minimum: 1, maximum: WAIT_MAX_SECONDS },
    },
    required: ['conversationId'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      outcome: { type: 'string', enum: ['TURN_OVER', 'TIMED_OUT', 'ENDED'] },
      agentState: { type: ['string', 'null'] },
      cursor: { type: ['string', 'null'] },
      eventCount: { type: 'integer' },
      events: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            type: { type: 'string' },
            source: { type: ['string', 'null'] },
            text: { type: ['string', 'null'] },
            cursor: { type: 'string' },
          },
          required: ['type', 'cursor'],
        },
      },
      error: {
        type: 'object',
        properties: { code: { type: 'string' }, message: { type: 'string' } },
        required: ['code', 'message'],
      },
    },
    required: ['outcome', 'agentState', 'cursor', 'eventCount', 'events'],
  },
  annotations: { title: "Wait for the agent's turn", readOnlyHint: true, openWorldHint: false },
} as const;

const SUBSCRIPTION = `subscription WaitForAgent($conversationId: ID!, $after: String) {
  conversationEvents(conversationId: $conversationId, after: $after) {
    __typename cursor source message
    ... on AgentStateChangedEvent { agentState }
  }
}`;

interface EventSummary {
  type: string;
  source: string | null;
  text: string | null;
  cursor: string;
}

/** What the wait needs from its caller. */
export interface WaitContext {
  /** Runs one GraphQL request in process (Yoga's `fetch`). */
  graphql: (request: Request) => Promise<Response>;
  /** `http://gateway/graphql`-style URL of the GraphQL path. */
  graphqlUrl: string;
  /** The caller's credential headers. */
  credentials: Headers;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** Sends `notifications/progress` when the request carries a progress token; absent otherwise. */
  progress?: (progress: number, message: string) => Promise<void>;
}

function toolError(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message } }) }] };
}

/** Runs one `wait_for_agent` call. */
export async function waitForAgent(args: Record<string, unknown>, ctx: WaitContext): Promise<CallToolResult> {
  const { conversationId, after, timeoutSeconds } = args;
  const unknown = Object.keys(args).filter(
    (key) => !['conversationId', 'after', 'timeoutSeconds'].includes(key),
  );
  if (typeof conversationId !== 'string' || conversationId === '')
    return toolError('BAD_USER_INPUT', '`conversationId` must be a non-empty string.');
  if (after !== undefined && after !== null && typeof after !== 'string')
    return toolError('BAD_USER_INPUT', '`after` must be a cursor string.');
  if (
    timeoutSeconds !== undefined &&
    (typeof timeoutSeconds !== 'number' ||
      !Number.isInteger(timeoutSeconds) ||
      timeoutSeconds < 1 ||
      timeoutSeconds > WAIT_MAX_SECONDS)
  )
    return toolError(
      'BAD_USER_INPUT',
      `\`timeoutSeconds\` must be an integer from 1 to ${WAIT_MAX_SECONDS}.`,
    );
  if (unknown.length > 0) return toolError('BAD_USER_INPUT', `Unknown argument: ${unknown.join(', ')}.`);
  const timeoutMs = (timeoutSeconds ?? WAIT_DEFAULT_SECONDS) * 1000;

  const stream = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stream.abort();
  }, timeoutMs);
  const onCancel = () => stream.abort();
  if (ctx.signal.aborted) stream.abort();
  else ctx.signal.addEventListener('abort', onCancel, { once: true });

  const events: EventSummary[] = [];
  let eventCount = 0;
  let cursor: string | null = typeof after === 'string' ? after : null;
  let agentState: string | null = null;
  let notified = 0;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const started = Date.now();
  const progress = (message: string) => {
    notified++;
    ctx.progress?.(notified, message).catch(() => {});
  };
  if (ctx.progress)
    heartbeat = setInterval(
      () => progress(`waiting, ${Math.round((Date.now() - started) / 1000)} s, ${eventCount} events`),
      HEARTBEAT_MS,
    );

  const answer = (
    outcome: 'TURN_OVER' | 'TIMED_OUT' | 'ENDED',
    error?: { code: string; message: string },
  ) => {
    const structuredContent = {
      outcome,
      agentState,
      cursor,
      eventCount,
      events,
      ...(error ? { error } : {}),
    };
    return {
      content: [{ type: 'text', text: JSON.stringify(structuredContent) }],
      structuredContent,
    } satisfies CallToolResult;
  };

  try {
    const headers = new Headers(ctx.credentials);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'text/event-stream');
    let response: Response;
    try {
      response = await ctx.graphql(
        new Request(ctx.graphqlUrl, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            query: SUBSCRIPTION,
            operationName: 'WaitForAgent',
            variables: { conversationId, after: typeof after === 'string' ? after : null },
          }),
          signal: stream.signal,
        }),
      );
    } catch (error) {
      if (stream.signal.aborted)
        return timedOut
          ? answer('TIMED_OUT')
          : toolError('REQUEST_CANCELLED', 'The client cancelled the wait.');
      throw error;
    }
    if (!response.body || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const body = (await response.json().catch(() => ({}))) as {
        errors?: { message: string; extensions?: { code?: string } }[];
      };
      const first = body.errors?.[0];
      return toolError(
        first?.extensions?.code ?? 'INTERNAL_SERVER_ERROR',
        first?.message ?? `GraphQL answered ${response.status}.`,
      );
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const release = () => {
      reader.cancel().catch(() => {});
    };
    stream.signal.addEventListener('abort', release, { once: true });
    let buffer = '';
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<string>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (stream.signal.aborted) break;
          throw error;
        }
        if (chunk.done) break;
        buffer += chunk.value;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = frame.split('\n');
          if (lines.some((line) => line === 'event: complete')) return answer('ENDED');
          const data = lines
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          if (!data) continue;
          const result = JSON.parse(data) as {
            data?: { conversationEvents?: Record<string, unknown> | null } | null;
            errors?: { message: string; extensions?: { code?: string } }[];
          };
          const first = result.errors?.[0];
          if (first) {
            const error = { code: first.extensions?.code ?? 'INTERNAL_SERVER_ERROR', message: first.message };
            return eventCount === 0 ? toolError(error.code, error.message) : answer('ENDED', error);
          }
          const event = result.data?.conversationEvents;
          if (!event) continue;
          eventCount++;
          const text = typeof event.message === 'string' ? event.message : null;
          events.push({
            type: String(event.__typename),
            source: typeof event.source === 'string' ? event.source : null,
            text: text && text.length > WAIT_TEXT_CHARS ? `${text.slice(0, WAIT_TEXT_CHARS)}…` : text,
            cursor: String(event.cursor),
          });
          if (events.length > WAIT_MAX_EVENTS) events.shift();
          cursor = String(event.cursor);
          if (typeof event.agentState === 'string') agentState = event.agentState;
          progress(
            agentState ? `${String(event.__typename)} (agent ${agentState})` : String(event.__typename),
          );
          if (
            event.__typename === 'AgentStateChangedEvent' &&
            (TURN_OVER_STATES as readonly string[]).includes(String(event.agentState))
          )
            return answer('TURN_OVER');
        }
      }
    } finally {
      stream.signal.removeEventListener('abort', release);
      release();
    }
    if (timedOut) return answer('TIMED_OUT');
    if (ctx.signal.aborted) return toolError('REQUEST_CANCELLED', 'The client cancelled the wait.');
    return answer('ENDED');
  } finally {
    clearTimeout(timer);
    if (heartbeat) clearInterval(heartbeat);
    ctx.signal.removeEventListener('abort', onCancel);
    stream.abort();
  }
}
