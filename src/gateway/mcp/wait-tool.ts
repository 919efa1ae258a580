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
import { failureOf, type GraphQLCaller, openSubscription, type SubscriptionOpening } from './graphql-call.ts';
import { toolError } from './tool-call.ts';

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

/** The subscription a wait runs. */
export const WAIT_SUBSCRIPTION = `subscription WaitForAgent($conversationId: ID!, $after: String) {
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
  /** Where the subscription runs, as the MCP caller. */
  caller: GraphQLCaller;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** Sends `notifications/progress` when the request carries a progress token; absent otherwise. */
  progress?: (progress: number, message: string) => Promise<void>;
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
    let opening: SubscriptionOpening;
    try {
      opening = await openSubscription(
        ctx.caller,
        {
          query: WAIT_SUBSCRIPTION,
          operationName: 'WaitForAgent',
          variables: { conversationId, after: typeof after === 'string' ? after : null },
        },
        stream.signal,
      );
    } catch (error) {
      if (stream.signal.aborted)
        return timedOut
          ? answer('TIMED_OUT')
          : toolError('REQUEST_CANCELLED', 'The client cancelled the wait.');
      throw error;
    }
    if ('refused' in opening) return toolError(opening.refused.code, opening.refused.message);
    for await (const result of opening.results) {
      const first = result.errors?.[0];
      if (first) {
        const error = failureOf(first);
        return eventCount === 0 ? toolError(error.code, error.message) : answer('ENDED', error);
      }
      const event = result.data?.conversationEvents as Record<string, unknown> | null | undefined;
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
      progress(agentState ? `${String(event.__typename)} (agent ${agentState})` : String(event.__typename));
      if (
        event.__typename === 'AgentStateChangedEvent' &&
        (TURN_OVER_STATES as readonly string[]).includes(String(event.agentState))
      )
        return answer('TURN_OVER');
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
