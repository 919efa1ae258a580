import { badUserInput } from '../errors.ts';
import { collectConnection } from '../upstream/page-walker.ts';
import {
  type Conversation,
  type ConversationFilter,
  type CreatedConversation,
  type CreateConversationInput as CreateInput,
  isConversationId,
} from '../upstream/port/conversation.ts';
import type { GitProviderValue } from '../upstream/port/vocabulary.ts';
import { builder } from './builder.ts';
import { readPagingArgs } from './connection.ts';
import {
  ConversationStatusEnum,
  ConversationTriggerEnum,
  GitProviderEnum,
  KNOWN_STATUSES,
  knownOrUnknown,
  RuntimeStatusEnum,
  requireKnownInput,
  SuggestedTaskTypeEnum,
} from './enums.ts';
import { MUTATION_ERROR_TYPES } from './errors.ts';
import { tryDecodeGlobalId } from './global-id.ts';

export const ConversationRef = builder.objectRef<Conversation>('Conversation');

/** The upstream id behind a conversation's global id (also read by inline-resolvers.ts). */
export const conversationNodeId = (conversation: Conversation): string => conversation.conversationId;

builder.node(ConversationRef, {
  description:
    'A conversation between a user and a coding agent. Fields the upstream may send null, leave out or send oddly are nullable or have the fallback their description names, so one odd record never fails a query.',
  id: { resolve: conversationNodeId },
  isTypeOf: (value) =>
    typeof value === 'object' && value !== null && typeof (value as Conversation).conversationId === 'string',
  loadOne: (id, context) => context.conversationLoader.load(id),
  fields: (t) => ({
    conversationId: t.exposeString('conversationId', {
      description: 'The upstream id (32 lowercase hex characters); also accepted by `conversation(id:)`.',
    }),
    title: t.exposeString('title', {
      description:
        'Title; new conversations are "Conversation <first 5 characters of the id>", and so is one whose upstream record has no title (null, missing or empty).',
    }),
    status: t.expose('status', {
      type: ConversationStatusEnum,
      description:
        'Lifecycle status; UNKNOWN for a value this gateway does not know, or when the upstream sent none (see `statusRaw`).',
    }),
    statusRaw: t.exposeString('statusRaw', {
      nullable: true,
      description: 'The upstream `status` string as sent; null when it sent none.',
    }),
    runtimeStatus: t.expose('runtimeStatus', {
      type: RuntimeStatusEnum,
      nullable: true,
      description:
        'V0 only; null on V1 (see `executionStatus` and `sandboxStatus` there). Runtime status; null when no agent runs; UNKNOWN for new values (see `runtimeStatusRaw`).',
    }),
    runtimeStatusRaw: t.exposeString('runtimeStatusRaw', {
      nullable: true,
      description: 'V0 only; null on V1. The upstream `runtime_status` string as sent.',
    }),
    selectedRepository: t.exposeString('selectedRepository', {
      nullable: true,
      description: 'Repository as "owner/repo".',
    }),
    selectedBranch: t.exposeString('selectedBranch', { nullable: true, description: 'Branch checked out.' }),
    gitProvider: t.expose('gitProvider', {
      type: GitProviderEnum,
      nullable: true,
      description: 'Provider of the repository; UNKNOWN for new values (see `gitProviderRaw`).',
    }),
    gitProviderRaw: t.exposeString('gitProviderRaw', {
      nullable: true,
      description: 'The upstream `git_provider` string as sent.',
    }),
    trigger: t.expose('trigger', {
      type: ConversationTriggerEnum,
      nullable: true,
      description: 'What started it; UNKNOWN for new values (see `triggerRaw`).',
    }),
    triggerRaw: t.exposeString('triggerRaw', {
      nullable: true,
      description: 'The upstream `trigger` string as sent.',
    }),
    numConnections: t.exposeInt('numConnections', {
      description:
        'V0 only; always 0 on V1, which counts no connections (as its own V0 compatibility answers do). Live socket connections to it; 0 when the upstream sent no count.',
    }),
    url: t.exposeString('url', {
      nullable: true,
      description:
        "Where its agent is served. V0: relative in single-server mode, the runtime's absolute address in nested-runtime mode; null when stopped. V1: the agent server's absolute conversation URL; null unless its sandbox runs.",
    }),
    sessionApiKey: t.exposeString('sessionApiKey', {
      nullable: true,
      description:
        "Secret: V0: the nested runtime's key (null in single-server mode or when stopped); V1: its sandbox's key (null unless the sandbox runs). Only ever returned to the caller who owns the conversation.",
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      nullable: true,
      description:
        'When it was created (UTC); null when the upstream sent no readable time. Offsets are converted, zone-less times read in `UPSTREAM_TIMEZONE`.',
    }),
    lastUpdatedAt: t.expose('lastUpdatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (UTC, as `createdAt`); null when unknown.',
    }),
    prNumbers: t.exposeIntList('prNumbers', {
      description: 'Pull request numbers opened from it; entries that are not integers are left out.',
    }),
  }),
});

// --- Queries --------------------------------------------------------------------------------------

builder.queryField('conversations', (t) =>
  t.connection(
    {
      type: ConversationRef,
      // Nullable: an upstream failure nulls this field (with a coded error), not the whole answer.
      nullable: true,
      description:
        'Conversations of the caller, newest first. Forward paging only (`first` default 20, max 100; `after` accepts any edge cursor). Filters are exact matches. An upstream record without a usable `conversation_id` is left out (and logged); it never costs the other conversations of the page.',
      args: {
        trigger: t.arg({
          type: ConversationTriggerEnum,
          description: 'Only conversations started this way.',
        }),
        repository: t.arg.string({ description: 'Only conversations on this repository ("owner/repo").' }),
      },
      // Not async: it answers the walker's own promise, which an async function would wrap in another.
      resolve: (_root, args, context) => {
        const filter: ConversationFilter = {
          trigger: requireKnownInput(args.trigger, 'trigger') ?? null,
          repository: args.repository ?? null,
        };
        const { first, start } = readPagingArgs(args, filter);
        const collecting = collectConnection({
          first,
          start,
          filter,
          fetchPage: (page) => context.upstream.searchConversations(page, filter),
          settings: context.paging,
        });
        // Lets `conversation`/`node`/`nodes` in the same operation reuse what this list returns.
        context.trackList(collecting);
        return collecting;
      },
    },
    { name: 'ConversationConnection', description: 'A page of conversations.' },
    { name: 'ConversationEdge', description: 'A conversation with the cursor that resumes after it.' },
  ),
);

builder.queryField('conversation', (t) =>
  t.field({
    type: ConversationRef,
    nullable: true,
    description:
      'One conversation by global id or raw conversation id; null when the upstream does not know it.',
    args: {
      id: t.arg.id({
        required: true,
        description: 'A global id (`Conversation.id`) or a raw `conversationId`.',
      }),
    },
    resolve: (_root, args, context) => context.conversationLoader.load(toConversationId(String(args.id))),
  }),
);

/**
 * Accepts a global id of a Conversation or a raw upstream id.
 * @throws GraphQLError BAD_USER_INPUT for anything else
 */
function toConversationId(id: string): string {
  const global = tryDecodeGlobalId(id);
  if (global) {
    if (global.typename !== 'Conversation') {
      throw badUserInput(`The id belongs to a ${global.typename}, not a Conversation.`);
    }
    return global.id;
  }
  if (!isConversationId(id)) {
    throw badUserInput('Not a conversation id.');
  }
  return id;
}

// --- createConversation -----------------------------------------------------------------------------

const McpRemoteServerInput = builder.inputType('McpRemoteServerInput', {
  description: 'An MCP server reached over SSE or streamable HTTP.',
  fields: (t) => ({
    url: t.string({ required: true, description: 'Server URL.' }),
    apiKey: t.string({ description: 'Secret: sent upstream, never logged or echoed.' }),
  }),
});

const McpEnvVariableInput = builder.inputType('McpEnvVariableInput', {
  description: 'One environment variable of a stdio MCP server (the upstream map as a list).',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Variable name.' }),
    value: t.string({ required: true, description: 'Secret: sent upstream, never logged or echoed.' }),
  }),
});

const McpStdioServerInput = builder.inputType('McpStdioServerInput', {
  description: 'An MCP server started as a local process.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Server name.' }),
    command: t.string({ required: true, description: 'Executable.' }),
    args: t.stringList({ description: 'Arguments.' }),
    env: t.field({ type: [McpEnvVariableInput], description: 'Environment (values are secrets).' }),
  }),
});

const McpConfigInput = builder.inputType('McpConfigInput', {
  description: 'MCP servers the agent may use.',
  fields: (t) => ({
    sseServers: t.field({ type: [McpRemoteServerInput], description: 'SSE servers.' }),
    stdioServers: t.field({ type: [McpStdioServerInput], description: 'Stdio servers.' }),
    shttpServers: t.field({ type: [McpRemoteServerInput], description: 'Streamable HTTP servers.' }),
  }),
});

const SuggestedTaskInput = builder.inputType('SuggestedTaskInput', {
  description: 'Start from a suggested task (sets trigger SUGGESTED_TASK).',
  fields: (t) => ({
    gitProvider: t.field({ type: GitProviderEnum, required: true, description: 'Provider of the repo.' }),
    taskType: t.field({ type: SuggestedTaskTypeEnum, required: true, description: 'Kind of task.' }),
    repo: t.string({ description: 'Repository "owner/repo".' }),
    issueNumber: t.int({ description: 'Issue or pull request number.' }),
    title: t.string({ description: 'Title of the task.' }),
  }),
});

const CreateMicroagentInput = builder.inputType('CreateMicroagentInput', {
  description: 'Start a microagent-authoring conversation (sets trigger MICROAGENT_MANAGEMENT).',
  fields: (t) => ({
    repo: t.string({ required: true, description: 'Repository "owner/repo".' }),
    gitProvider: t.field({ type: GitProviderEnum, description: 'Provider of the repo.' }),
    title: t.string({ description: 'Title.' }),
  }),
});

const CreateConversationInput = builder.inputType('CreateConversationInput', {
  description: 'Every field of the upstream create body; all optional (`{}` starts an empty conversation).',
  fields: (t) => ({
    repository: t.string({ description: 'Repository "owner/repo".' }),
    gitProvider: t.field({ type: GitProviderEnum, description: 'Provider of `repository`.' }),
    selectedBranch: t.string({ description: 'Branch to check out.' }),
    initialUserMessage: t.string({ description: 'First user message (upstream `initial_user_msg`).' }),
    imageUrls: t.stringList({ description: 'Images attached to the first message.' }),
    replayJson: t.string({ description: 'JSON-encoded list of recorded events to replay.' }),
    suggestedTask: t.field({ type: SuggestedTaskInput, description: 'Start from a suggested task.' }),
    createMicroagent: t.field({ type: CreateMicroagentInput, description: 'Author a microagent.' }),
    conversationInstructions: t.string({ description: 'Extra instructions for the agent.' }),
    mcpConfig: t.field({
      type: McpConfigInput,
      description: 'MCP servers (keys and env values are secrets).',
    }),
    conversationId: t.string({
      description:
        'Join (or create with) this id, where the upstream lets callers choose ids; joining leaves metadata unchanged.',
    }),
  }),
});

const CreateConversationPayload = builder
  .objectRef<CreatedConversation>('CreateConversationPayload')
  .implement({
    description: 'The conversation was created or joined.',
    fields: (t) => ({
      conversationId: t.exposeString('conversationId', { description: 'Its upstream id.' }),
      conversationStatus: t.field({
        type: ConversationStatusEnum,
        description: 'STARTING for a new one, RUNNING when joining a running one; UNKNOWN for new values.',
        resolve: (created) => knownOrUnknown(KNOWN_STATUSES, created.conversationStatus),
      }),
      // Not `message`: a nullable `message` here conflicts with `Error.message: String!` when a client
      // selects both in one union selection ("Fields "message" conflict"), which every client trips on.
      statusMessage: t.exposeString('message', {
        nullable: true,
        description: 'The upstream status `message` (usually null).',
      }),
      conversation: t.field({
        type: ConversationRef,
        nullable: true,
        description: 'The conversation, loaded only when selected (one upstream read).',
        resolve: (created, _args, context) => context.conversationLoader.load(created.conversationId),
      }),
    }),
  });

function checkCreateInput(input: CreateInput): CreateInput {
  requireKnownInput(input.gitProvider, 'input.gitProvider');
  requireKnownInput(input.suggestedTask?.gitProvider, 'input.suggestedTask.gitProvider');
  requireKnownInput(input.createMicroagent?.gitProvider, 'input.createMicroagent.gitProvider');
  return input;
}

builder.mutationField('createConversation', (t) =>
  t.field({
    type: CreateConversationPayload,
    description: 'Creates a conversation (or joins one with `conversationId`) and starts its agent.',
    args: {
      input: t.arg({ type: CreateConversationInput, required: true, description: 'The create body.' }),
    },
    errors: {
      types: MUTATION_ERROR_TYPES,
      directResult: true,
      union: {
        name: 'CreateConversationResult',
        description: 'The payload, or an error the client can act on.',
      },
    },
    resolve: (_root, args, context) => context.upstream.createConversation(checkCreateInput(args.input)),
  }),
);

// --- Provider tokens ---------------------------------------------------------------------------------

const StringMapEntry = builder.objectRef<[string, string]>('StringMapEntry').implement({
  description: 'One key/value of a string map the upstream answered.',
  fields: (t) => ({
    key: t.string({ description: 'Key.', resolve: ([key]) => key }),
    value: t.string({ description: 'Value.', resolve: ([, value]) => value }),
  }),
});

const UnsetProviderTokensPayload = builder
  .objectRef<Record<string, string>>('UnsetProviderTokensPayload')
  .implement({
    description: "The caller's git provider tokens were cleared (also when none were stored).",
    fields: (t) => ({
      statusMessage: t.string({
        nullable: true,
        description: 'The upstream status `message`, e.g. "Unset Git provider tokens".',
        resolve: (map) => map.message ?? null,
      }),
      entries: t.field({
        type: [StringMapEntry],
        description: 'The whole string map the upstream answered, in its order.',
        resolve: (map) => Object.entries(map),
      }),
    }),
  });

builder.mutationField('unsetProviderTokens', (t) =>
  t.field({
    type: UnsetProviderTokensPayload,
    description:
      "Clears the caller's git provider tokens (the web client's log out). Returns the payload directly: the upstream has no failure a client could act on.",
    resolve: (_root, _args, context) => context.upstream.unsetProviderTokens(),
  }),
);

const AddGitProviderTokenInput = builder.inputType('AddGitProviderTokenInput', {
  description: 'A git provider token to store for the caller.',
  fields: (t) => ({
    provider: t.field({ type: GitProviderEnum, required: true, description: 'The provider.' }),
    token: t.string({ required: true, description: 'Secret: the access token; never logged or echoed.' }),
    host: t.string({ description: 'Host for self-hosted providers.' }),
  }),
});

const AddGitProviderTokenPayload = builder
  .objectRef<{ message: string | null }>('AddGitProviderTokenPayload')
  .implement({
    description: 'The token was stored.',
    fields: (t) => ({
      statusMessage: t.exposeString('message', {
        nullable: true,
        description: 'The upstream status `message`.',
      }),
    }),
  });

builder.mutationField('addGitProviderToken', (t) =>
  t.field({
    type: AddGitProviderTokenPayload,
    description: 'Stores a git provider token for the caller, making its repositories accessible.',
    args: { input: t.arg({ type: AddGitProviderTokenInput, required: true, description: 'The token.' }) },
    errors: {
      types: MUTATION_ERROR_TYPES,
      directResult: true,
      union: {
        name: 'AddGitProviderTokenResult',
        description: 'The payload, or an error the client can act on.',
      },
    },
    resolve: (_root, args, context) =>
      context.upstream.addGitProviderToken({
        provider: requireKnownInput(args.input.provider, 'input.provider') as GitProviderValue,
        token: args.input.token,
        host: args.input.host ?? null,
      }),
  }),
);
