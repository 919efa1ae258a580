/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** A git provider token to store for the caller. */
export type AddGitProviderTokenInput = {
  /** Host for self-hosted providers. */
  host?: string | null | undefined;
  /** The provider. */
  provider: GitProvider;
  /** Secret: the access token; never logged or echoed. */
  token: string;
};

/** Lifecycle of a conversation (upstream `status`). */
export type ConversationStatus =
  /** Upstream value `ARCHIVED`. */
  | 'ARCHIVED'
  /** Upstream value `ERROR`. */
  | 'ERROR'
  /** Upstream value `RUNNING`. */
  | 'RUNNING'
  /** Upstream value `STARTING`. */
  | 'STARTING'
  /** Upstream value `STOPPED`. */
  | 'STOPPED'
  /** A value this gateway does not know yet (a newer upstream); see the matching `...Raw` field. */
  | 'UNKNOWN';

/** What started a conversation (upstream `trigger`). */
export type ConversationTrigger =
  /** Upstream value `automation`. */
  | 'AUTOMATION'
  /** Upstream value `bitbucket`. */
  | 'BITBUCKET'
  /** Upstream value `gui`. */
  | 'GUI'
  /** Upstream value `jira`. */
  | 'JIRA'
  /** Upstream value `jira_dc`. */
  | 'JIRA_DC'
  /** Upstream value `linear`. */
  | 'LINEAR'
  /** Upstream value `microagent_management`. */
  | 'MICROAGENT_MANAGEMENT'
  /** Upstream value `openhands_api`. */
  | 'OPENHANDS_API'
  /** Upstream value `resolver`. */
  | 'RESOLVER'
  /** Upstream value `slack`. */
  | 'SLACK'
  /** Upstream value `suggested_task`. */
  | 'SUGGESTED_TASK'
  /** A value this gateway does not know yet (a newer upstream); see the matching `...Raw` field. */
  | 'UNKNOWN';

/** Every field of the upstream create body; all optional (`{}` starts an empty conversation). */
export type CreateConversationInput = {
  /** Join (or create with) this id, where the upstream lets callers choose ids; joining leaves metadata unchanged. */
  conversationId?: string | null | undefined;
  /** Extra instructions for the agent. */
  conversationInstructions?: string | null | undefined;
  /** Author a microagent. */
  createMicroagent?: CreateMicroagentInput | null | undefined;
  /** Provider of `repository`. */
  gitProvider?: GitProvider | null | undefined;
  /** Images attached to the first message. */
  imageUrls?: Array<string> | null | undefined;
  /** First user message (upstream `initial_user_msg`). */
  initialUserMessage?: string | null | undefined;
  /** MCP servers (keys and env values are secrets). */
  mcpConfig?: McpConfigInput | null | undefined;
  /** JSON-encoded list of recorded events to replay. */
  replayJson?: string | null | undefined;
  /** Repository "owner/repo". */
  repository?: string | null | undefined;
  /** Branch to check out. */
  selectedBranch?: string | null | undefined;
  /** Start from a suggested task. */
  suggestedTask?: SuggestedTaskInput | null | undefined;
};

/** Start a microagent-authoring conversation (sets trigger MICROAGENT_MANAGEMENT). */
export type CreateMicroagentInput = {
  /** Provider of the repo. */
  gitProvider?: GitProvider | null | undefined;
  /** Repository "owner/repo". */
  repo: string;
  /** Title. */
  title?: string | null | undefined;
};

/** What a V1 conversation's agent is doing (upstream `execution_status`). */
export type ExecutionStatus =
  /** Being deleted (upstream `deleting`). */
  | 'DELETING'
  /** Stopped on an error (upstream `error`). */
  | 'ERROR'
  /** Done with the task (upstream `finished`). */
  | 'FINISHED'
  /** Waiting for a message (upstream `idle`). */
  | 'IDLE'
  /** Paused by a user (upstream `paused`). */
  | 'PAUSED'
  /** Working (upstream `running`). */
  | 'RUNNING'
  /** Stopped because it was looping without progress (upstream `stuck`). */
  | 'STUCK'
  /** A value this gateway does not know yet (a newer upstream); see the matching `...Raw` field. */
  | 'UNKNOWN'
  /** Waiting for a user to confirm or reject an action (upstream `waiting_for_confirmation`). */
  | 'WAITING_FOR_CONFIRMATION';

/** Git hosting provider (upstream `git_provider`). */
export type GitProvider =
  /** Upstream value `azure_devops`. */
  | 'AZURE_DEVOPS'
  /** Upstream value `bitbucket`. */
  | 'BITBUCKET'
  /** Upstream value `enterprise_sso`. */
  | 'ENTERPRISE_SSO'
  /** Upstream value `github`. */
  | 'GITHUB'
  /** Upstream value `gitlab`. */
  | 'GITLAB'
  /** A value this gateway does not know yet (a newer upstream); see the matching `...Raw` field. */
  | 'UNKNOWN';

/** MCP servers the agent may use. */
export type McpConfigInput = {
  /** Streamable HTTP servers. */
  shttpServers?: Array<McpRemoteServerInput> | null | undefined;
  /** SSE servers. */
  sseServers?: Array<McpRemoteServerInput> | null | undefined;
  /** Stdio servers. */
  stdioServers?: Array<McpStdioServerInput> | null | undefined;
};

/** One environment variable of a stdio MCP server (the upstream map as a list). */
export type McpEnvVariableInput = {
  /** Variable name. */
  name: string;
  /** Secret: sent upstream, never logged or echoed. */
  value: string;
};

/** An MCP server reached over SSE or streamable HTTP. */
export type McpRemoteServerInput = {
  /** Secret: sent upstream, never logged or echoed. */
  apiKey?: string | null | undefined;
  /** Server URL. */
  url: string;
};

/** An MCP server started as a local process. */
export type McpStdioServerInput = {
  /** Arguments. */
  args?: Array<string> | null | undefined;
  /** Executable. */
  command: string;
  /** Environment (values are secrets). */
  env?: Array<McpEnvVariableInput> | null | undefined;
  /** Server name. */
  name: string;
};

/** State of the conversation's runtime (upstream `runtime_status`); null when no agent runs. */
export type RuntimeStatus =
  /** Upstream value `CHAT_INTERFACE$AGENT_RATE_LIMITED_STOPPED_MESSAGE`. */
  | 'AGENT_RATE_LIMITED_STOPPED'
  /** Upstream value `STATUS$BUILDING_RUNTIME`. */
  | 'BUILDING_RUNTIME'
  /** Upstream value `STATUS$ERROR`. */
  | 'ERROR'
  /** Upstream value `STATUS$ERROR_LLM_AUTHENTICATION`. */
  | 'ERROR_LLM_AUTHENTICATION'
  /** Upstream value `STATUS$ERROR_LLM_CONTENT_POLICY_VIOLATION`. */
  | 'ERROR_LLM_CONTENT_POLICY_VIOLATION'
  /** Upstream value `STATUS$ERROR_LLM_INTERNAL_SERVER_ERROR`. */
  | 'ERROR_LLM_INTERNAL_SERVER_ERROR'
  /** Upstream value `STATUS$ERROR_LLM_OUT_OF_CREDITS`. */
  | 'ERROR_LLM_OUT_OF_CREDITS'
  /** Upstream value `STATUS$ERROR_LLM_SERVICE_UNAVAILABLE`. */
  | 'ERROR_LLM_SERVICE_UNAVAILABLE'
  /** Upstream value `STATUS$ERROR_MEMORY`. */
  | 'ERROR_MEMORY'
  /** Upstream value `STATUS$ERROR_RUNTIME_DISCONNECTED`. */
  | 'ERROR_RUNTIME_DISCONNECTED'
  /** Upstream value `STATUS$GIT_PROVIDER_AUTHENTICATION_ERROR`. */
  | 'GIT_PROVIDER_AUTHENTICATION_ERROR'
  /** Upstream value `STATUS$LLM_RETRY`. */
  | 'LLM_RETRY'
  /** Upstream value `STATUS$READY`. */
  | 'READY'
  /** Upstream value `STATUS$RUNTIME_STARTED`. */
  | 'RUNTIME_STARTED'
  /** Upstream value `STATUS$SETTING_UP_GIT_HOOKS`. */
  | 'SETTING_UP_GIT_HOOKS'
  /** Upstream value `STATUS$SETTING_UP_WORKSPACE`. */
  | 'SETTING_UP_WORKSPACE'
  /** Upstream value `STATUS$STARTING_RUNTIME`. */
  | 'STARTING_RUNTIME'
  /** Upstream value `STATUS$STOPPED`. */
  | 'STOPPED'
  /** A value this gateway does not know yet (a newer upstream); see the matching `...Raw` field. */
  | 'UNKNOWN';

/** The state of a V1 conversation's sandbox (upstream `sandbox_status`). */
export type SandboxStatus =
  /** Failed (upstream `ERROR`). */
  | 'ERROR'
  /** Gone (upstream `MISSING`). */
  | 'MISSING'
  /** Paused; resuming it restarts the agent server (upstream `PAUSED`). */
  | 'PAUSED'
  /** Running: its agent server answers (upstream `RUNNING`). */
  | 'RUNNING'
  /** Being created or resumed (upstream `STARTING`). */
  | 'STARTING'
  /** A value this gateway does not know yet (a newer upstream); see the matching `...Raw` field. */
  | 'UNKNOWN';

/** Start from a suggested task (sets trigger SUGGESTED_TASK). */
export type SuggestedTaskInput = {
  /** Provider of the repo. */
  gitProvider: GitProvider;
  /** Issue or pull request number. */
  issueNumber?: number | null | undefined;
  /** Repository "owner/repo". */
  repo?: string | null | undefined;
  /** Kind of task. */
  taskType: SuggestedTaskType;
  /** Title of the task. */
  title?: string | null | undefined;
};

/** Kind of a suggested task (input only). */
export type SuggestedTaskType =
  /** Upstream value `CREATE_MICROAGENT`. */
  | 'CREATE_MICROAGENT'
  /** Upstream value `FAILING_CHECKS`. */
  | 'FAILING_CHECKS'
  /** Upstream value `MERGE_CONFLICTS`. */
  | 'MERGE_CONFLICTS'
  /** Upstream value `OPEN_ISSUE`. */
  | 'OPEN_ISSUE'
  /** Upstream value `OPEN_PR`. */
  | 'OPEN_PR'
  /** Upstream value `UNRESOLVED_COMMENTS`. */
  | 'UNRESOLVED_COMMENTS';

export type ConversationFieldsFragment = { id: string, conversationId: string, title: string, status: ConversationStatus, statusRaw: string | null, runtimeStatus: RuntimeStatus | null, runtimeStatusRaw: string | null, selectedRepository: string | null, selectedBranch: string | null, gitProvider: GitProvider | null, gitProviderRaw: string | null, trigger: ConversationTrigger | null, triggerRaw: string | null, numConnections: number, url: string | null, sessionApiKey: string | null, createdAt: string | null, lastUpdatedAt: string | null, prNumbers: Array<number> };

export type ListConversationsQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
  trigger?: ConversationTrigger | null | undefined;
  repository?: string | null | undefined;
}>;


export type ListConversationsQuery = { conversations: { edges: Array<{ cursor: string, node: { id: string, conversationId: string, selectedRepository: string | null, trigger: ConversationTrigger | null } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } } | null };

export type GetConversationQueryVariables = Exact<{
  id: string;
}>;


export type GetConversationQuery = { conversation: { id: string, conversationId: string, title: string, status: ConversationStatus, statusRaw: string | null, runtimeStatus: RuntimeStatus | null, runtimeStatusRaw: string | null, selectedRepository: string | null, selectedBranch: string | null, gitProvider: GitProvider | null, gitProviderRaw: string | null, trigger: ConversationTrigger | null, triggerRaw: string | null, numConnections: number, url: string | null, sessionApiKey: string | null, createdAt: string | null, lastUpdatedAt: string | null, prNumbers: Array<number> } | null };

export type ConversationV1FieldsQueryVariables = Exact<{
  id: string;
}>;


export type ConversationV1FieldsQuery = { conversation: { conversationId: string, executionStatus: ExecutionStatus | null, executionStatusRaw: string | null, sandboxStatus: SandboxStatus | null, sandboxStatusRaw: string | null, llmModel: string | null, parentConversationId: string | null, subConversationIds: Array<string> | null, metrics: { accumulatedCost: number | null, maxBudgetPerTask: number | null, promptTokens: number | null, completionTokens: number | null, cacheReadTokens: number | null, cacheWriteTokens: number | null, reasoningTokens: number | null, contextWindow: number | null } | null, parentConversation: { id: string } | null, subConversations: Array<{ id: string }> | null } | null };

export type ListThenLookUpQueryVariables = Exact<{
  first: number;
  id: string;
  ids: Array<string> | string;
}>;


export type ListThenLookUpQuery = { conversations: { edges: Array<{ node: { id: string, title: string } }> } | null, conversation: { id: string, title: string } | null, node: { title: string, id: string } | null, nodes: Array<{ id: string } | null> };

export type NodesQueryVariables = Exact<{
  ids: Array<string> | string;
}>;


export type NodesQuery = { nodes: Array<{ __typename: 'Conversation', conversationId: string, title: string, id: string } | null> };

export type NodeQueryVariables = Exact<{
  id: string;
}>;


export type NodeQuery = { node: { __typename: 'Conversation', conversationId: string, id: string } | null };

export type CreatedConversationFragment = { conversationId: string, conversationStatus: ConversationStatus, statusMessage: string | null };

export type CreateConversationMutationVariables = Exact<{
  input: CreateConversationInput;
}>;


export type CreateConversationMutation = { createConversation:
    | { __typename: 'CreateConversationPayload', conversationId: string, conversationStatus: ConversationStatus, statusMessage: string | null, conversation: { id: string, conversationId: string, title: string, status: ConversationStatus, statusRaw: string | null, runtimeStatus: RuntimeStatus | null, runtimeStatusRaw: string | null, selectedRepository: string | null, selectedBranch: string | null, gitProvider: GitProvider | null, gitProviderRaw: string | null, trigger: ConversationTrigger | null, triggerRaw: string | null, numConnections: number, url: string | null, sessionApiKey: string | null, createdAt: string | null, lastUpdatedAt: string | null, prNumbers: Array<number> } | null }
    | { __typename: 'UpstreamDomainError', message: string, msgId: string | null }
    | { __typename: 'UpstreamValidationError', message: string, issues: Array<{ loc: Array<string>, msg: string, type: string }> }
   };

export type CreateConversationIdOnlyMutationVariables = Exact<{
  input: CreateConversationInput;
}>;


export type CreateConversationIdOnlyMutation = { createConversation:
    | { __typename: 'CreateConversationPayload', conversationId: string, conversationStatus: ConversationStatus, statusMessage: string | null }
    | { __typename: 'UpstreamDomainError', message: string }
    | { __typename: 'UpstreamValidationError', message: string }
   };

export type AddGitProviderTokenMutationVariables = Exact<{
  input: AddGitProviderTokenInput;
}>;


export type AddGitProviderTokenMutation = { addGitProviderToken:
    | { __typename: 'AddGitProviderTokenPayload', statusMessage: string | null }
    | { __typename: 'UpstreamDomainError', message: string }
    | { __typename: 'UpstreamValidationError', message: string }
   };

export type UnsetProviderTokensMutationVariables = Exact<{ [key: string]: never; }>;


export type UnsetProviderTokensMutation = { unsetProviderTokens: { statusMessage: string | null, entries: Array<{ key: string, value: string }> } };

export const ConversationFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConversationFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Conversation"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusRaw"}},{"kind":"Field","name":{"kind":"Name","value":"runtimeStatus"}},{"kind":"Field","name":{"kind":"Name","value":"runtimeStatusRaw"}},{"kind":"Field","name":{"kind":"Name","value":"selectedRepository"}},{"kind":"Field","name":{"kind":"Name","value":"selectedBranch"}},{"kind":"Field","name":{"kind":"Name","value":"gitProvider"}},{"kind":"Field","name":{"kind":"Name","value":"gitProviderRaw"}},{"kind":"Field","name":{"kind":"Name","value":"trigger"}},{"kind":"Field","name":{"kind":"Name","value":"triggerRaw"}},{"kind":"Field","name":{"kind":"Name","value":"numConnections"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"sessionApiKey"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"prNumbers"}}]}}]} as unknown as DocumentNode<ConversationFieldsFragment, unknown>;
export const CreatedConversationFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"CreatedConversation"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CreateConversationPayload"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"conversationStatus"}},{"kind":"Field","name":{"kind":"Name","value":"statusMessage"}}]}}]} as unknown as DocumentNode<CreatedConversationFragment, unknown>;
export const ListConversationsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ListConversations"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"last"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"before"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"trigger"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ConversationTrigger"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"repository"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversations"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}},{"kind":"Argument","name":{"kind":"Name","value":"last"},"value":{"kind":"Variable","name":{"kind":"Name","value":"last"}}},{"kind":"Argument","name":{"kind":"Name","value":"before"},"value":{"kind":"Variable","name":{"kind":"Name","value":"before"}}},{"kind":"Argument","name":{"kind":"Name","value":"trigger"},"value":{"kind":"Variable","name":{"kind":"Name","value":"trigger"}}},{"kind":"Argument","name":{"kind":"Name","value":"repository"},"value":{"kind":"Variable","name":{"kind":"Name","value":"repository"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"selectedRepository"}},{"kind":"Field","name":{"kind":"Name","value":"trigger"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"hasPreviousPage"}},{"kind":"Field","name":{"kind":"Name","value":"startCursor"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<ListConversationsQuery, ListConversationsQueryVariables>;
export const GetConversationDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"GetConversation"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversation"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConversationFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConversationFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Conversation"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusRaw"}},{"kind":"Field","name":{"kind":"Name","value":"runtimeStatus"}},{"kind":"Field","name":{"kind":"Name","value":"runtimeStatusRaw"}},{"kind":"Field","name":{"kind":"Name","value":"selectedRepository"}},{"kind":"Field","name":{"kind":"Name","value":"selectedBranch"}},{"kind":"Field","name":{"kind":"Name","value":"gitProvider"}},{"kind":"Field","name":{"kind":"Name","value":"gitProviderRaw"}},{"kind":"Field","name":{"kind":"Name","value":"trigger"}},{"kind":"Field","name":{"kind":"Name","value":"triggerRaw"}},{"kind":"Field","name":{"kind":"Name","value":"numConnections"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"sessionApiKey"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"prNumbers"}}]}}]} as unknown as DocumentNode<GetConversationQuery, GetConversationQueryVariables>;
export const ConversationV1FieldsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConversationV1Fields"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversation"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"executionStatus"}},{"kind":"Field","name":{"kind":"Name","value":"executionStatusRaw"}},{"kind":"Field","name":{"kind":"Name","value":"sandboxStatus"}},{"kind":"Field","name":{"kind":"Name","value":"sandboxStatusRaw"}},{"kind":"Field","name":{"kind":"Name","value":"llmModel"}},{"kind":"Field","name":{"kind":"Name","value":"metrics"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"accumulatedCost"}},{"kind":"Field","name":{"kind":"Name","value":"maxBudgetPerTask"}},{"kind":"Field","name":{"kind":"Name","value":"promptTokens"}},{"kind":"Field","name":{"kind":"Name","value":"completionTokens"}},{"kind":"Field","name":{"kind":"Name","value":"cacheReadTokens"}},{"kind":"Field","name":{"kind":"Name","value":"cacheWriteTokens"}},{"kind":"Field","name":{"kind":"Name","value":"reasoningTokens"}},{"kind":"Field","name":{"kind":"Name","value":"contextWindow"}}]}},{"kind":"Field","name":{"kind":"Name","value":"parentConversationId"}},{"kind":"Field","name":{"kind":"Name","value":"parentConversation"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"subConversationIds"}},{"kind":"Field","name":{"kind":"Name","value":"subConversations"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]}}]} as unknown as DocumentNode<ConversationV1FieldsQuery, ConversationV1FieldsQueryVariables>;
export const ListThenLookUpDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ListThenLookUp"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"ids"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversations"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"conversation"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Conversation"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"title"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"ids"},"value":{"kind":"Variable","name":{"kind":"Name","value":"ids"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<ListThenLookUpQuery, ListThenLookUpQueryVariables>;
export const NodesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Nodes"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"ids"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"ids"},"value":{"kind":"Variable","name":{"kind":"Name","value":"ids"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Conversation"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"title"}}]}}]}}]}}]} as unknown as DocumentNode<NodesQuery, NodesQueryVariables>;
export const NodeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Node"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Conversation"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversationId"}}]}}]}}]}}]} as unknown as DocumentNode<NodeQuery, NodeQueryVariables>;
export const CreateConversationDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateConversation"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateConversationInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createConversation"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CreateConversationPayload"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"CreatedConversation"}},{"kind":"Field","name":{"kind":"Name","value":"conversation"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConversationFields"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"UpstreamValidationError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"issues"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"loc"}},{"kind":"Field","name":{"kind":"Name","value":"msg"}},{"kind":"Field","name":{"kind":"Name","value":"type"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"UpstreamDomainError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"msgId"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"CreatedConversation"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CreateConversationPayload"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"conversationStatus"}},{"kind":"Field","name":{"kind":"Name","value":"statusMessage"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConversationFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Conversation"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusRaw"}},{"kind":"Field","name":{"kind":"Name","value":"runtimeStatus"}},{"kind":"Field","name":{"kind":"Name","value":"runtimeStatusRaw"}},{"kind":"Field","name":{"kind":"Name","value":"selectedRepository"}},{"kind":"Field","name":{"kind":"Name","value":"selectedBranch"}},{"kind":"Field","name":{"kind":"Name","value":"gitProvider"}},{"kind":"Field","name":{"kind":"Name","value":"gitProviderRaw"}},{"kind":"Field","name":{"kind":"Name","value":"trigger"}},{"kind":"Field","name":{"kind":"Name","value":"triggerRaw"}},{"kind":"Field","name":{"kind":"Name","value":"numConnections"}},{"kind":"Field","name":{"kind":"Name","value":"url"}},{"kind":"Field","name":{"kind":"Name","value":"sessionApiKey"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUpdatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"prNumbers"}}]}}]} as unknown as DocumentNode<CreateConversationMutation, CreateConversationMutationVariables>;
export const CreateConversationIdOnlyDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateConversationIdOnly"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateConversationInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createConversation"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"FragmentSpread","name":{"kind":"Name","value":"CreatedConversation"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"CreatedConversation"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CreateConversationPayload"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"conversationStatus"}},{"kind":"Field","name":{"kind":"Name","value":"statusMessage"}}]}}]} as unknown as DocumentNode<CreateConversationIdOnlyMutation, CreateConversationIdOnlyMutationVariables>;
export const AddGitProviderTokenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddGitProviderToken"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AddGitProviderTokenInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addGitProviderToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"AddGitProviderTokenPayload"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"statusMessage"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Error"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<AddGitProviderTokenMutation, AddGitProviderTokenMutationVariables>;
export const UnsetProviderTokensDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UnsetProviderTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"unsetProviderTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"statusMessage"}},{"kind":"Field","name":{"kind":"Name","value":"entries"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"value"}}]}}]}}]}}]} as unknown as DocumentNode<UnsetProviderTokensMutation, UnsetProviderTokensMutationVariables>;