/**
 * A conversation's history and lifecycle: `Conversation.events` (a Relay connection over the stored
 * events, both directions) and the mutations `deleteConversation`, `renameConversation`,
 * `startConversation`, `stopConversation`. Resolvers validate, call the upstream port bound to the
 * caller (`context.upstream`), and answer the affected Conversation node (or its id for delete) so
 * client caches update.
 */

import { BridgeError } from '../upstream/port/bridge-error.ts';
import type { Conversation } from '../upstream/port/conversation.ts';
import {
  ConversationNotFoundError,
  PermissionDeniedError,
  UpstreamValidationError,
} from '../upstream/port/errors.ts';
import type { GitProviderValue } from '../upstream/port/vocabulary.ts';
import { builder } from './builder.ts';
import type { GatewayContext } from './context.ts';
import { ConversationRef } from './conversation.ts';
import { GitProviderEnum, requireKnownInput } from './enums.ts';
import { ErrorInterface } from './errors.ts';
import {
  DEFAULT_EVENTS_PAGE_SIZE,
  MAX_EVENTS_PAGE_SIZE,
  readEventsPaging,
  toConnection,
} from './event-connection.ts';
import { ConversationEventInterface, conversationIdArg } from './events.ts';
import { encodeGlobalId } from './global-id.ts';

// --- Conversation.events ------------------------------------------------------------------------------

builder.objectField(ConversationRef, 'events', (t) =>
  t.connection(
    {
      type: ConversationEventInterface,
      // Nullable: an upstream failure nulls this field (with a coded error), not the conversation.
      nullable: true,
      description: `The stored events, oldest first within a page. \`last: 50\` is the newest 50 (a chat view), \`before\` pages back from there; \`first\`/\`after\` page forward from the first event. Cursors are the events' own \`cursor\` tokens (opaque, stable for the life of the conversation): an edge cursor also resumes \`conversationEvents(after:)\`, and an event's \`cursor\` from the subscription works here as \`after\`/\`before\`. Default page size ${DEFAULT_EVENTS_PAGE_SIZE} (forward when neither \`first\` nor \`last\` is given), at most ${MAX_EVENTS_PAGE_SIZE}; mixing forward and backward arguments is BAD_USER_INPUT. To continue live: subscribe to \`conversationEvents\` with \`after\` = \`pageInfo.endCursor\` (edges are oldest first in both directions, so it is the newest edge's cursor). Kinds the gateway does not know arrive as \`OtherEvent\`, as on the subscription.`,
      resolve: async (conversation, args, context) => {
        const walk = readEventsPaging(args, context.upstream, context.paging.maxUpstreamCalls);
        return toConnection(await context.upstream.readEventsPage(conversation.conversationId, walk));
      },
    },
    { name: 'ConversationEventConnection', description: 'A page of stored conversation events.' },
    {
      name: 'ConversationEventEdge',
      description: "An event with its cursor (the event's own `cursor`).",
    },
  ),
);

// --- Error types ---------------------------------------------------------------------------------------

builder.objectType(ConversationNotFoundError, {
  name: 'ConversationNotFoundError',
  description:
    'No conversation with this id for this caller (unknown, already deleted, or not yours). Nothing was changed.',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    conversationId: t.exposeString('conversationId', { description: 'The raw conversation id asked for.' }),
  }),
});

builder.objectType(PermissionDeniedError, {
  name: 'PermissionDeniedError',
  description:
    'The conversation exists but belongs to someone else (the upstream answered 403). Nothing was changed.',
  interfaces: [ErrorInterface],
  fields: (t) => ({
    conversationId: t.exposeString('conversationId', { description: 'The raw conversation id asked for.' }),
    msgId: t.exposeString('msgId', {
      description: 'The upstream reason id, e.g. `AUTHORIZATION$PERMISSION_DENIED`.',
    }),
  }),
});

// --- Shared pieces --------------------------------------------------------------------------------------

const ID_DESCRIPTION = 'A `Conversation.id` global id or a raw `conversationId`.';

/** The conversation as it is now (not from this operation's cache), or not found. */
async function reload(context: GatewayContext, conversationId: string): Promise<Conversation> {
  const conversation = await context.conversationLoader.clear(conversationId).load(conversationId);
  if (!conversation) throw new ConversationNotFoundError(conversationId);
  return conversation;
}

function conversationPayload(name: string, description: string) {
  return builder.objectRef<{ conversation: Conversation }>(name).implement({
    description,
    fields: (t) => ({
      conversation: t.field({
        type: ConversationRef,
        description: 'The affected conversation as it is now (for client caches).',
        resolve: (payload) => payload.conversation,
      }),
    }),
  });
}

// --- deleteConversation ---------------------------------------------------------------------------------

const DeleteConversationInput = builder.inputType('DeleteConversationInput', {
  description: 'The conversation to delete.',
  fields: (t) => ({ conversationId: t.id({ required: true, description: ID_DESCRIPTION }) }),
});

const DeleteConversationPayload = builder
  .objectRef<{ conversationId: string }>('DeleteConversationPayload')
  .implement({
    description: 'The conversation, its events and its sockets are gone.',
    fields: (t) => ({
      deletedId: t.id({
        description: "The deleted conversation's global id (`Conversation.id`), for Relay's `@deleteRecord`.",
        resolve: (payload) => encodeGlobalId('Conversation', payload.conversationId),
      }),
      conversationId: t.exposeString('conversationId', { description: 'The deleted raw conversation id.' }),
    }),
  });

builder.mutationField('deleteConversation', (t) =>
  t.field({
    type: DeleteConversationPayload,
    description:
      'Deletes a conversation with all its events: stops its agent, and ends every `conversationEvents` stream of it with CONVERSATION_DELETED. Not undoable.',
    args: { input: t.arg({ type: DeleteConversationInput, required: true, description: 'Which one.' }) },
    errors: {
      types: [ConversationNotFoundError],
      directResult: true,
      union: { name: 'DeleteConversationResult', description: 'The payload, or why nothing was deleted.' },
    },
    resolve: async (_root, { input }, context) => {
      const conversationId = conversationIdArg(String(input.conversationId), 'input.conversationId');
      await context.upstream.deleteConversation(conversationId);
      context.conversationLoader.clear(conversationId);
      context.upstream.endLiveEvents(conversationId, new BridgeError('CONVERSATION_DELETED'));
      return { conversationId };
    },
  }),
);

// --- renameConversation ---------------------------------------------------------------------------------

const RenameConversationInput = builder.inputType('RenameConversationInput', {
  description: 'A new title for a conversation.',
  fields: (t) => ({
    conversationId: t.id({ required: true, description: ID_DESCRIPTION }),
    title: t.string({
      required: true,
      description:
        'The title: 1 to 200 characters once surrounding whitespace is removed (stored stripped); the upstream checks it (UpstreamValidationError).',
    }),
  }),
});

const RenameConversationPayload = conversationPayload(
  'RenameConversationPayload',
  "The title was changed. On V0 the conversation's subscribers also get a TitleChangedEvent (the upstream pushes the new title on its socket); a V1 upstream pushes none, so there `conversation.title` here is how clients learn it.",
);

builder.mutationField('renameConversation', (t) =>
  t.field({
    type: RenameConversationPayload,
    description: 'Sets the title of a conversation.',
    args: { input: t.arg({ type: RenameConversationInput, required: true, description: 'The new title.' }) },
    errors: {
      types: [ConversationNotFoundError, PermissionDeniedError, UpstreamValidationError],
      directResult: true,
      union: { name: 'RenameConversationResult', description: 'The payload, or why nothing was changed.' },
    },
    resolve: async (_root, { input }, context) => {
      const conversationId = conversationIdArg(String(input.conversationId), 'input.conversationId');
      await context.upstream.renameConversation(conversationId, input.title);
      return { conversation: await reload(context, conversationId) };
    },
  }),
);

// --- startConversation ----------------------------------------------------------------------------------

const StartConversationInput = builder.inputType('StartConversationInput', {
  description: "Starts a conversation's agent.",
  fields: (t) => ({
    conversationId: t.id({ required: true, description: ID_DESCRIPTION }),
    providers: t.field({
      type: [GitProviderEnum],
      description:
        'Git providers whose tokens the agent may use (upstream `providers_set`); omitted = none given.',
    }),
  }),
});

const StartConversationPayload = conversationPayload(
  'StartConversationPayload',
  'The agent is starting or was already running.',
);

builder.mutationField('startConversation', (t) =>
  t.field({
    type: StartConversationPayload,
    description: "Starts a conversation's agent unless it runs (a stopped conversation becomes STARTING).",
    args: { input: t.arg({ type: StartConversationInput, required: true, description: 'Which one.' }) },
    errors: {
      types: [ConversationNotFoundError, UpstreamValidationError],
      directResult: true,
      union: { name: 'StartConversationResult', description: 'The payload, or why nothing was started.' },
    },
    resolve: async (_root, { input }, context) => {
      const conversationId = conversationIdArg(String(input.conversationId), 'input.conversationId');
      const providers =
        input.providers?.map(
          (provider, index) => requireKnownInput(provider, `input.providers[${index}]`) as GitProviderValue,
        ) ?? null;
      await context.upstream.startConversation(conversationId, providers);
      return { conversation: await reload(context, conversationId) };
    },
  }),
);

// --- stopConversation -----------------------------------------------------------------------------------

const StopConversationInput = builder.inputType('StopConversationInput', {
  description: "Stops a conversation's agent.",
  fields: (t) => ({ conversationId: t.id({ required: true, description: ID_DESCRIPTION }) }),
});

const StopConversationPayload = builder
  .objectRef<{ conversation: Conversation; wasRunning: boolean }>('StopConversationPayload')
  .implement({
    description: 'The agent is stopped (also when it was not running).',
    fields: (t) => ({
      conversation: t.field({
        type: ConversationRef,
        description: 'The affected conversation as it is now (for client caches).',
        resolve: (payload) => payload.conversation,
      }),
      wasRunning: t.exposeBoolean('wasRunning', {
        description: 'Whether its agent was running (false: nothing had to be stopped).',
      }),
    }),
  });

builder.mutationField('stopConversation', (t) =>
  t.field({
    type: StopConversationPayload,
    description:
      "Stops a conversation's agent; every `conversationEvents` stream of it ends with CONVERSATION_STOPPED. A later message or `startConversation` starts it again.",
    args: { input: t.arg({ type: StopConversationInput, required: true, description: 'Which one.' }) },
    errors: {
      types: [ConversationNotFoundError],
      directResult: true,
      union: { name: 'StopConversationResult', description: 'The payload, or why nothing was stopped.' },
    },
    resolve: async (_root, { input }, context) => {
      const conversationId = conversationIdArg(String(input.conversationId), 'input.conversationId');
      // The upstream answers "not running" for an unknown id too; the reload tells the two apart.
      const stopped = await context.upstream.stopConversation(conversationId);
      const conversation = await reload(context, conversationId);
      context.upstream.endLiveEvents(conversationId, new BridgeError('CONVERSATION_STOPPED'));
      return { conversation, wasRunning: stopped.wasRunning };
    },
  }),
);
