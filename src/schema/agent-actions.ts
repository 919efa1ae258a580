/**
 * Talking back to a conversation: `sendMessage` and `changeAgentState`. Both go through the upstream
 * port bound to the caller (`context.upstream`), which delivers them over the conversation's live
 * connection and answers the upstream's echo; `sendMessage` takes a plain request when no live
 * connection is open and no echo is asked for.
 */

import { BridgeError } from '../upstream/port/bridge-error.ts';
import { ConversationNotFoundError } from '../upstream/port/errors.ts';
import type { ConversationEvent, ConversationEventKind } from '../upstream/port/events.ts';
import type { SentMessage } from '../upstream/port/upstream.ts';
import { REQUESTABLE_AGENT_STATES, type RequestableAgentStateValue } from '../upstream/port/vocabulary.ts';
import { builder } from './builder.ts';
import { ConversationUnavailableError } from './errors.ts';
import {
  AgentStateChangeRequestedEventType,
  badInput,
  conversationIdArg,
  UserMessageEventType,
} from './events.ts';
import { selectsField } from './selection.ts';

type EventOf<K extends ConversationEventKind> = Extract<ConversationEvent, { kind: K }>;

const RequestableAgentStateEnum = builder.enumType('RequestableAgentState', {
  description: 'Agent states a client may ask for with `changeAgentState`.',
  values: Object.fromEntries(
    REQUESTABLE_AGENT_STATES.map((state) => [
      state.toUpperCase(),
      { value: state, description: `Upstream \`${state}\`.` },
    ]),
  ) as Record<
    Uppercase<RequestableAgentStateValue>,
    { value: RequestableAgentStateValue; description: string }
  >,
});

/**
 * Runs one delivery through the port; an unavailable conversation becomes the error type (the same
 * member whether the live connection or a plain request carried it), other errors stay coded errors.
 */
async function delivering<T>(deliver: () => Promise<T>): Promise<T> {
  try {
    return await deliver();
  } catch (error) {
    if (error instanceof BridgeError && error.code === 'CONVERSATION_NOT_FOUND') {
      throw new ConversationUnavailableError('NOT_FOUND');
    }
    if (error instanceof BridgeError && error.code === 'CONVERSATION_UNREACHABLE') {
      throw new ConversationUnavailableError('UNREACHABLE', error.message);
    }
    if (error instanceof ConversationNotFoundError) {
      throw new ConversationUnavailableError('NOT_FOUND');
    }
    throw error;
  }
}

const MAX_MESSAGE_LENGTH = 100_000;
const MAX_IMAGE_URLS = 20;

const SendMessageInput = builder.inputType('SendMessageInput', {
  description: 'A message to the agent of a conversation.',
  fields: (t) => ({
    conversationId: t.id({
      required: true,
      description: 'A `Conversation.id` global id or a raw `conversationId`.',
    }),
    content: t.string({ required: true, description: `The text (1 to ${MAX_MESSAGE_LENGTH} characters).` }),
    imageUrls: t.stringList({
      description: `Image URLs to attach (http, https or data URLs; at most ${MAX_IMAGE_URLS}).`,
    }),
  }),
});

const MessageDeliveryEnum = builder.enumType('MessageDelivery', {
  description: 'Which upstream route carried a message (see `sendMessage`).',
  values: {
    SOCKET: {
      description:
        "The conversation socket (`oh_user_action`); the upstream's echo is the payload's `event`.",
    },
    REST: {
      description:
        "A plain request: on V0 `POST /api/conversations/{id}/events` (no socket was open and `event` was not selected); on V1 always (the agent server's `POST .../events`).",
    },
  },
});

const SendMessagePayload = builder.objectRef<SentMessage>('SendMessagePayload').implement({
  description: 'The upstream accepted the message.',
  fields: (t) => ({
    event: t.field({
      type: UserMessageEventType,
      description:
        "The accepted message as the upstream stored it. V0: with its new `eventId`; selecting it makes the message go over the socket (V0's REST route answers no event). V1: the stored copy read back (`eventId` null, its `cursor` set).",
      // Never null when selected: the REST path is taken only when this field is not selected.
      resolve: (payload) => payload.event as EventOf<'USER_MESSAGE'>,
    }),
    delivery: t.field({
      type: MessageDeliveryEnum,
      description: 'Which upstream route carried the message.',
      resolve: (payload) => payload.delivery,
    }),
  }),
});

builder.mutationField('sendMessage', (t) =>
  t.field({
    type: SendMessagePayload,
    description:
      "Sends a user message; the agent answers on `conversationEvents`. Over the conversation socket (`oh_user_action`, answering the upstream's echo as `event`) when `event` is selected or this gateway already has the conversation's socket open for the caller; otherwise over `POST /api/conversations/{id}/events`, which needs no socket (no connect, no history replay). On V1 always over the agent server's REST route (a paused sandbox is resumed first).",
    args: { input: t.arg({ type: SendMessageInput, required: true, description: 'The message.' }) },
    errors: {
      types: [ConversationUnavailableError],
      directResult: true,
      union: { name: 'SendMessageResult', description: 'The payload, or why the message was not delivered.' },
    },
    resolve: async (_root, { input }, context, info) => {
      const conversationId = conversationIdArg(String(input.conversationId), 'input.conversationId');
      if (input.content.length === 0 || input.content.length > MAX_MESSAGE_LENGTH) {
        throw badInput(`input.content must have 1 to ${MAX_MESSAGE_LENGTH} characters.`);
      }
      const imageUrls = input.imageUrls ?? [];
      if (imageUrls.length > MAX_IMAGE_URLS)
        throw badInput(`input.imageUrls: at most ${MAX_IMAGE_URLS} URLs.`);
      if (imageUrls.some((url) => !/^(https?:\/\/|data:image\/)/i.test(url))) {
        throw badInput('input.imageUrls: only http(s) and data:image URLs are accepted.');
      }
      return delivering(() =>
        context.upstream.sendMessage(
          conversationId,
          { content: input.content, imageUrls },
          { echo: selectsField(info, 'event') },
        ),
      );
    },
  }),
);

const ChangeAgentStateInput = builder.inputType('ChangeAgentStateInput', {
  description: "A request to change a conversation's agent state.",
  fields: (t) => ({
    conversationId: t.id({
      required: true,
      description: 'A `Conversation.id` global id or a raw `conversationId`.',
    }),
    state: t.field({ type: RequestableAgentStateEnum, required: true, description: 'The state to ask for.' }),
  }),
});

const ChangeAgentStatePayload = builder
  .objectRef<{ event: EventOf<'AGENT_STATE_CHANGE_REQUESTED'> }>('ChangeAgentStatePayload')
  .implement({
    description:
      'The upstream accepted the request; the resulting state arrives as an AgentStateChangedEvent.',
    fields: (t) => ({
      event: t.field({
        type: AgentStateChangeRequestedEventType,
        description:
          "The accepted request: on V0 as the upstream stored it (with its new `eventId`); on V1, which stores no echo of it, the request as an event without `eventId`, carrying the newest stored event's `cursor`.",
        resolve: (payload) => payload.event,
      }),
    }),
  });

builder.mutationField('changeAgentState', (t) =>
  t.field({
    type: ChangeAgentStatePayload,
    description:
      "Asks the agent to stop, pause, resume or confirm/reject a pending action: over the conversation socket on V0, over the agent server's routes on V1 (`STOPPED` pauses there).",
    args: { input: t.arg({ type: ChangeAgentStateInput, required: true, description: 'The request.' }) },
    errors: {
      types: [ConversationUnavailableError],
      directResult: true,
      union: {
        name: 'ChangeAgentStateResult',
        description: 'The payload, or why the request was not delivered.',
      },
    },
    resolve: async (_root, { input }, context) => {
      const conversationId = conversationIdArg(String(input.conversationId), 'input.conversationId');
      const event = await delivering(() => context.upstream.changeAgentState(conversationId, input.state));
      return { event: event as EventOf<'AGENT_STATE_CHANGE_REQUESTED'> };
    },
  }),
);
