/**
 * Live conversations: the `ConversationEvent` interface and its types and `Subscription.conversationEvents`.
 * Resolvers only read the port's mapped events (src/upstream/port/events.ts); live streams come from the
 * port's `subscribe`, whichever API carries them.
 * The mutations that talk back (`sendMessage`, `changeAgentState`) are in agent-actions.ts.
 */
import type { GraphQLError } from 'graphql';
import { badUserInput } from '../errors.ts';
import { BridgeError } from '../upstream/port/bridge-error.ts';
import { EventCursorError, type EventPosition } from '../upstream/port/event-cursor.ts';
import type { ConversationEvent, ConversationEventKind } from '../upstream/port/events.ts';
import { AGENT_STATES, EVENT_SOURCES } from '../upstream/port/vocabulary.ts';
import { builder } from './builder.ts';
import type { GatewayContext } from './context.ts';
import { KNOWN_RUNTIME_STATUSES, knownOrUnknown, RuntimeStatusEnum, UNKNOWN_VALUE } from './enums.ts';
import { eventCursorArg } from './event-connection.ts';
import { tryDecodeGlobalId } from './global-id.ts';

type EventOf<K extends ConversationEventKind> = Extract<ConversationEvent, { kind: K }>;

/** Output enums map wire strings (any string may come); typed wide so resolvers can pass them through. */
type WireEnumValues = Record<string, { value: string; description: string }>;

// --- Enums ------------------------------------------------------------------------------------------

/** One description per source the port knows (vocabulary.ts), so the two lists cannot drift apart. */
const SOURCE_DESCRIPTIONS: Record<(typeof EVENT_SOURCES)[number], string> = {
  agent: 'The agent.',
  user: 'A user (the echo of what a client sent).',
  environment: 'The runtime environment.',
};

const EventSourceEnum = builder.enumType('EventSource', {
  description: 'Who produced an event (upstream `source`).',
  values: {
    ...Object.fromEntries(
      EVENT_SOURCES.map((source) => [
        source.toUpperCase(),
        { value: source, description: SOURCE_DESCRIPTIONS[source] },
      ]),
    ),
    UNKNOWN: { value: UNKNOWN_VALUE, description: 'A source this gateway does not know yet; see `raw`.' },
  } as WireEnumValues,
});

const EventPhaseEnum = builder.enumType('EventPhase', {
  description: 'Which of the upstream event shapes an event had.',
  values: {
    ACTION: { description: 'Something done or said (upstream `action`).' },
    OBSERVATION: { description: 'The result of an action or a state change (upstream `observation`).' },
    STATUS_UPDATE: { description: 'A runtime status or title update (not stored, no event id).' },
    ERROR: { description: 'An error report (not stored, no event id).' },
    UNKNOWN: { description: 'A shape this gateway does not know yet; see `raw`.' },
  },
});

const AgentStateEnum = builder.enumType('AgentState', {
  description: "The agent's state (upstream `agent_state`).",
  values: {
    ...Object.fromEntries(
      AGENT_STATES.map((state) => [
        state.toUpperCase(),
        { value: state, description: `Upstream \`${state}\`.` },
      ]),
    ),
    UNKNOWN: {
      value: UNKNOWN_VALUE,
      description: 'A state this gateway does not know yet; see `agentStateRaw`.',
    },
  } as WireEnumValues,
});
const KNOWN_AGENT_STATES: ReadonlySet<string> = new Set(AGENT_STATES);

const StatusLevelEnum = builder.enumType('StatusLevel', {
  description: 'Severity of a status update (upstream `type`).',
  values: {
    INFO: { value: 'info', description: 'Progress information.' },
    ERROR: { value: 'error', description: 'The runtime reports a failure.' },
    UNKNOWN: { value: UNKNOWN_VALUE, description: 'A level this gateway does not know yet; see `raw`.' },
  } as WireEnumValues,
});

// --- The interface and its types ---------------------------------------------------------------------

/** GraphQL type name of each mapped kind. */
const TYPE_OF_KIND: Record<ConversationEventKind, string> = {
  USER_MESSAGE: 'UserMessageEvent',
  AGENT_MESSAGE: 'AgentMessageEvent',
  COMMAND: 'CommandEvent',
  COMMAND_OUTPUT: 'CommandOutputEvent',
  FILE_READ: 'FileReadEvent',
  FILE_WRITE: 'FileWriteEvent',
  FILE_EDIT: 'FileEditEvent',
  BROWSE: 'BrowseEvent',
  THINK: 'ThinkEvent',
  FINISH: 'FinishEvent',
  AGENT_STATE_CHANGED: 'AgentStateChangedEvent',
  AGENT_STATE_CHANGE_REQUESTED: 'AgentStateChangeRequestedEvent',
  STATUS_UPDATE: 'StatusUpdateEvent',
  TITLE_CHANGED: 'TitleChangedEvent',
  ERROR: 'ErrorEvent',
  OTHER: 'OtherEvent',
};

export const ConversationEventInterface = builder
  .interfaceRef<ConversationEvent>('ConversationEvent')
  .implement({
    description:
      'One event of a conversation. Select the concrete types you render; every other or future kind arrives as `OtherEvent` with its upstream name in `upstreamKind`.',
    resolveType: (event) => TYPE_OF_KIND[event.kind],
    fields: (t) => ({
      eventId: t.exposeInt('eventId', {
        nullable: true,
        description:
          "V0 only; null on V1 (its event ids are strings: use `cursor`). V0's per-conversation id (0, 1, 2, ...); null for status updates and errors, which the upstream does not store.",
      }),
      cursor: t.exposeString('cursor', {
        description:
          "Opaque position of this event, the value to resume from on every upstream API: pass it as `conversationEvents(after:)` to get every stored event after this one, then live ones; it is also this event's edge cursor in `Conversation.events` (usable there as `after`/`before`). An event that is not stored (status update, error) carries the cursor of the stored event it follows, so resuming from it neither skips nor repeats a stored event (live-only events are never replayed). Valid for the life of the conversation on any gateway instance, against the same upstream API; treat it as a string, not as data.",
      }),
      timestamp: t.field({
        type: 'DateTime',
        nullable: true,
        description:
          'When it happened, in UTC. The upstream writes local time without a zone; the gateway reads it in its configured upstream time zone (`UPSTREAM_TIMEZONE`, default UTC).',
        resolve: (event) => event.timestamp,
      }),
      source: t.expose('source', {
        type: EventSourceEnum,
        nullable: true,
        description: 'Who produced it; null when the upstream says nothing (status updates, errors).',
      }),
      message: t.exposeString('message', { description: 'Human-readable summary (may be empty).' }),
      cause: t.exposeInt('cause', {
        nullable: true,
        description:
          'V0 only; null on V1. Id of the event this one answers (an observation points at its action).',
      }),
      phase: t.field({
        type: EventPhaseEnum,
        description: 'The upstream shape.',
        resolve: (event) => event.phase,
      }),
      upstreamKind: t.exposeString('upstreamKind', {
        description:
          'The upstream action or observation name (`run`, `agent_state_changed`, ...), or `status_update` / `error`.',
      }),
      raw: t.field({
        type: 'JSON',
        description:
          'The upstream event exactly as received (snake_case). Upstream events never carry the caller key.',
        resolve: (event) => event.raw,
      }),
    }),
  });

/** Declares one event type: `fields` adds the kind-specific fields to the interface's. */
function eventType<K extends ConversationEventKind>(
  kind: K,
  description: string,
  fields: Parameters<ReturnType<typeof builder.objectRef<EventOf<K>>>['implement']>[0]['fields'],
) {
  return builder.objectRef<EventOf<K>>(TYPE_OF_KIND[kind]).implement({
    description,
    interfaces: [ConversationEventInterface],
    fields,
  });
}

export const UserMessageEventType = eventType('USER_MESSAGE', 'A message from a user.', (t) => ({
  content: t.exposeString('content', { description: 'The text.' }),
  imageUrls: t.exposeStringList('imageUrls', { description: 'Attached image URLs.' }),
  fileUrls: t.exposeStringList('fileUrls', { description: 'Attached file URLs.' }),
}));

eventType('AGENT_MESSAGE', 'A message from the agent.', (t) => ({
  content: t.exposeString('content', { description: 'The text.' }),
  imageUrls: t.exposeStringList('imageUrls', { description: 'Attached image URLs.' }),
  waitForResponse: t.exposeBoolean('waitForResponse', {
    description: 'Whether the agent waits for the user to answer.',
  }),
}));

eventType('COMMAND', 'The agent runs a shell command (upstream `run` action).', (t) => ({
  command: t.exposeString('command', { description: 'The command line.' }),
  thought: t.exposeString('thought', { nullable: true, description: "The agent's reasoning, if given." }),
  isInput: t.exposeBoolean('isInput', { description: 'True when this is input to a running command.' }),
}));

eventType('COMMAND_OUTPUT', 'Output of a shell command (upstream `run` observation).', (t) => ({
  command: t.exposeString('command', { nullable: true, description: 'The command that ran.' }),
  output: t.exposeString('output', { description: 'What it printed.' }),
  exitCode: t.exposeInt('exitCode', { nullable: true, description: 'Its exit code, when known.' }),
  success: t.exposeBoolean('success', {
    nullable: true,
    description: 'Whether the upstream counts it a success.',
  }),
}));

eventType('FILE_READ', 'A file read: the action (no content) or its observation (the content).', (t) => ({
  path: t.exposeString('path', { nullable: true, description: 'The file.' }),
  content: t.exposeString('content', { nullable: true, description: 'What was read (observations only).' }),
}));

eventType('FILE_WRITE', 'A file written: the action (with the content) or its observation.', (t) => ({
  path: t.exposeString('path', { nullable: true, description: 'The file.' }),
  paths: t.exposeStringList('paths', {
    description: 'The file as a list (as on FileEditEvent), for clients that read both kinds alike.',
  }),
  content: t.exposeString('content', { nullable: true, description: 'The content written or reported.' }),
}));

eventType('FILE_EDIT', 'A file edited: the action (what to change) or its observation (the diff).', (t) => ({
  path: t.exposeString('path', {
    nullable: true,
    description: 'The file; null when the edit names several (a patch: see `paths`).',
  }),
  paths: t.exposeStringList('paths', {
    description:
      'Every file the edit changes, as the upstream names them (an observation that reports an error: none).',
  }),
  diff: t.exposeString('diff', { nullable: true, description: 'Unified diff of the change (observations).' }),
  command: t.exposeString('command', {
    nullable: true,
    description: 'Edit command of the action (`str_replace`, `create`, ...).',
  }),
  oldContent: t.exposeString('oldContent', {
    nullable: true,
    description: 'Text before (or text replaced).',
  }),
  newContent: t.exposeString('newContent', { nullable: true, description: 'Text after (or replacement).' }),
}));

eventType('BROWSE', 'The agent browses a URL: the action or its observation (page content).', (t) => ({
  url: t.exposeString('url', { nullable: true, description: 'The address.' }),
  content: t.exposeString('content', { nullable: true, description: 'Page text (observations only).' }),
}));

eventType('THINK', 'The agent thinks aloud.', (t) => ({
  thought: t.exposeString('thought', { description: 'The thought.' }),
}));

eventType('FINISH', 'The agent declares the task finished.', (t) => ({
  finalThought: t.exposeString('finalThought', { description: 'Closing words.' }),
  outputs: t.field({
    type: 'JSON',
    description: 'Structured outputs, if any.',
    resolve: (event) => event.outputs,
  }),
}));

eventType('AGENT_STATE_CHANGED', "The agent's state changed.", (t) => ({
  agentState: t.field({
    type: AgentStateEnum,
    description:
      'The new state; UNKNOWN for states this gateway does not know yet. On V1, the agent state the execution status maps to (`agentStateRaw` holds the execution status).',
    // The adapter's mapping, not the raw value: V1's raw value is an execution status (`idle`), which
    // maps onto an agent state (`awaiting_user_input`) under another name.
    resolve: (event) => event.state ?? UNKNOWN_VALUE,
  }),
  agentStateRaw: t.exposeString('stateRaw', { description: 'The upstream value as sent.' }),
  reason: t.exposeString('reason', { description: 'Why, when the upstream says (often empty).' }),
}));

export const AgentStateChangeRequestedEventType = eventType(
  'AGENT_STATE_CHANGE_REQUESTED',
  'A user asked the agent to change state (the echo of `changeAgentState`).',
  (t) => ({
    requestedState: t.field({
      type: AgentStateEnum,
      description: 'The state asked for; UNKNOWN for states this gateway does not know yet.',
      resolve: (event) => knownOrUnknown(KNOWN_AGENT_STATES, event.stateRaw),
    }),
    requestedStateRaw: t.exposeString('stateRaw', { description: 'The upstream value as sent.' }),
  }),
);

eventType('STATUS_UPDATE', 'A runtime status update (not stored: live subscribers only).', (t) => ({
  level: t.field({
    type: StatusLevelEnum,
    description: 'INFO or ERROR.',
    resolve: (event) => knownOrUnknown(new Set(['info', 'error']), event.statusType),
  }),
  runtimeStatus: t.field({
    type: RuntimeStatusEnum,
    nullable: true,
    description: 'The runtime status it reports, e.g. READY; UNKNOWN for values this gateway does not know.',
    resolve: (event) => knownOrUnknown(KNOWN_RUNTIME_STATUSES, event.runtimeStatus),
  }),
  runtimeStatusRaw: t.exposeString('runtimeStatus', {
    nullable: true,
    description: 'The upstream value as sent.',
  }),
}));

eventType(
  'TITLE_CHANGED',
  "The conversation's title changed (not stored: live subscribers only). V0 only: a V1 upstream pushes no title change on its event socket, so on V1 read `Conversation.title` again.",
  (t) => ({
    title: t.exposeString('title', { description: 'The new title.' }),
  }),
);

eventType('ERROR', 'An error reported by the upstream or the agent.', (t) => ({
  errorId: t.exposeString('errorId', { nullable: true, description: 'Stable id of the error, when given.' }),
}));

eventType('OTHER', 'Any other or future event kind; see `upstreamKind` and `raw`.', () => ({}));

// --- Arguments ---------------------------------------------------------------------------------------

const RAW_CONVERSATION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Accepts a `Conversation.id` global id or a raw upstream id.
 * @throws GraphQLError BAD_USER_INPUT for anything else
 */
export function conversationIdArg(value: string, argument: string): string {
  const global = tryDecodeGlobalId(value);
  if (global?.typename === 'Conversation') return global.id;
  if (global === null && RAW_CONVERSATION_ID.test(value)) return value;
  throw badUserInput(`${argument}: not a conversation id.`);
}

export function badInput(message: string): GraphQLError {
  return badUserInput(message);
}

// --- Subscription ------------------------------------------------------------------------------------

builder.subscriptionField('conversationEvents', (t) =>
  t.field({
    type: ConversationEventInterface,
    description:
      "A conversation's events as they happen, over graphql-ws (`ws://HOST/graphql`) or SSE. Which events: every event the upstream stores (each agent-state change included; kinds without a type of their own as OtherEvent) except `null` actions and `null` observations, the upstream's empty placeholders that its own clients never see; plus the live-only ones (status updates, errors). Order: stored events arrive in the upstream's stored order, each once, across the catch-up, live events and upstream reconnects, whatever order the upstream sends them in; live-only events come right after the stored event that preceded them. With `after` (an event's `cursor`, or an edge cursor of `Conversation.events`), every stored event after that one comes first, read from the upstream's stored events, then live ones, with no gap and no duplicate, whichever gateway instance serves the subscription and whether or not it still holds the conversation's socket. To resume after a disconnect, subscribe again with the `cursor` of the last event you received; to continue a transcript read with `Conversation.events`, pass its `pageInfo.endCursor`. (Against an older V0 upstream without the stored events route the catch-up comes from its socket replay, which leaves out agent-state changes but the last; see docs/live-events.md.) A stored event the upstream sends late, after a later one was already delivered, is left out (it stays in the upstream's history). Ends with one last result whose error is coded GATEWAY_SHUTTING_DOWN (this gateway instance is stopping, as at every rolling deploy: subscribe again at once with `after`), CONVERSATION_UNREACHABLE (the upstream stayed unreachable after reconnect attempts, or its stored events could not be read), UPSTREAM_TIMEOUT (the stored events did not arrive in time), UPSTREAM_TOO_MANY_CONNECTIONS (V1: the agent server's socket cap), SUBSCRIBER_TOO_SLOW (this subscriber fell too far behind): all five resumable with `after`; CONVERSATION_STOPPED (subscribe again once it runs), UPSTREAM_ERROR, or, not worth retrying as is, CONVERSATION_DELETED, CONVERSATION_NOT_FOUND, UNAUTHENTICATED, BAD_USER_INPUT. docs/live-events.md says which to retry.",
    args: {
      conversationId: t.arg.id({
        required: true,
        description: 'A `Conversation.id` global id or a raw `conversationId`.',
      }),
      after: t.arg.string({
        description:
          "Deliver every stored event after the one this cursor names first, then continue live: an event's `cursor` (from this subscription or the history) or an edge cursor of `Conversation.events`. Omit it and `fromBeginning` for live events only. A malformed cursor, or one issued against the other upstream API, is BAD_USER_INPUT.",
      }),
      fromBeginning: t.arg.boolean({
        description:
          'true: deliver the whole stored history first, then continue live (what `afterEventId: -1` did). Not together with `after` or `afterEventId`.',
      }),
      afterEventId: t.arg.int({
        deprecationReason:
          "Use `after` with an event's `cursor` (or `fromBeginning: true` for -1): they work on every upstream API (V1 events have no integer id). Still honoured on V0.",
        description:
          "V0 only: deliver the stored events with a greater id first (-1: the whole history), then continue live. Same as `after` with that event's cursor (-1: `fromBeginning: true`); passing it with either is BAD_USER_INPUT.",
      }),
    },
    subscribe: (_root, args, context: GatewayContext) => {
      const conversationId = conversationIdArg(String(args.conversationId), 'conversationId');
      // Both read here, before the stream starts, so a bad one is a request error and nothing attaches.
      const after = streamStart(
        context,
        args.after ?? null,
        args.fromBeginning === true,
        args.afterEventId ?? null,
      );
      // The bridge's terminal error arrives as one last item, which `resolve` throws: graphql-ws and SSE
      // then deliver a normal result with `errors[].extensions.code` and complete.
      return context.upstream.subscribe(conversationId, after);
    },
    resolve: (item: ConversationEvent | BridgeError) => {
      if (item instanceof BridgeError) throw item;
      return item;
    },
  }),
);

/**
 * Where a subscription starts: after `after`'s position, after `afterEventId` (deprecated), or live
 * only. Both at once is ambiguous and refused.
 * @throws GraphQLError BAD_USER_INPUT
 */
function streamStart(
  context: GatewayContext,
  after: string | null,
  fromBeginning: boolean,
  afterEventId: number | null,
): EventPosition | null {
  const given = [
    after !== null && 'after',
    fromBeginning && 'fromBeginning',
    afterEventId !== null && 'afterEventId',
  ];
  const starts = given.filter((name): name is string => name !== false);
  if (starts.length > 1) {
    throw badInput(
      `Pass one of after (a cursor), fromBeginning or the deprecated afterEventId, not ${starts.join(' and ')}.`,
    );
  }
  if (after !== null) return eventCursorArg(context.upstream, after, 'after');
  if (fromBeginning) return context.upstream.historyStartPosition();
  if (afterEventId === null) return null;
  if (afterEventId < -1) throw badInput('afterEventId must be -1 or more.');
  try {
    return context.upstream.eventIdPosition(afterEventId);
  } catch (error) {
    if (error instanceof EventCursorError) throw badInput(`afterEventId: ${error.message}`);
    throw error;
  }
}
