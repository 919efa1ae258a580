/* eslint-disable */
import * as types from './graphql.ts';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment ConversationFields on Conversation {\n    id\n    conversationId\n    title\n    status\n    statusRaw\n    runtimeStatus\n    runtimeStatusRaw\n    selectedRepository\n    selectedBranch\n    gitProvider\n    gitProviderRaw\n    trigger\n    triggerRaw\n    numConnections\n    url\n    sessionApiKey\n    createdAt\n    lastUpdatedAt\n    prNumbers\n  }\n": typeof types.ConversationFieldsFragmentDoc,
    "\n  query ListConversations(\n    $first: Int\n    $after: String\n    $last: Int\n    $before: String\n    $trigger: ConversationTrigger\n    $repository: String\n  ) {\n    conversations(\n      first: $first\n      after: $after\n      last: $last\n      before: $before\n      trigger: $trigger\n      repository: $repository\n    ) {\n      edges {\n        cursor\n        node {\n          id\n          conversationId\n          selectedRepository\n          trigger\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n": typeof types.ListConversationsDocument,
    "\n  query GetConversation($id: ID!) {\n    conversation(id: $id) {\n      ...ConversationFields\n    }\n  }\n": typeof types.GetConversationDocument,
    "\n  query ConversationV1Fields($id: ID!) {\n    conversation(id: $id) {\n      conversationId\n      executionStatus\n      executionStatusRaw\n      sandboxStatus\n      sandboxStatusRaw\n      llmModel\n      metrics {\n        accumulatedCost\n        maxBudgetPerTask\n        promptTokens\n        completionTokens\n        cacheReadTokens\n        cacheWriteTokens\n        reasoningTokens\n        contextWindow\n      }\n      parentConversationId\n      parentConversation {\n        id\n      }\n      subConversationIds\n      subConversations {\n        id\n      }\n    }\n  }\n": typeof types.ConversationV1FieldsDocument,
    "\n  query ListThenLookUp($first: Int!, $id: ID!, $ids: [ID!]!) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id\n          title\n        }\n      }\n    }\n    conversation(id: $id) {\n      id\n      title\n    }\n    node(id: $id) {\n      id\n      ... on Conversation {\n        title\n      }\n    }\n    nodes(ids: $ids) {\n      id\n    }\n  }\n": typeof types.ListThenLookUpDocument,
    "\n  query Nodes($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      __typename\n      id\n      ... on Conversation {\n        conversationId\n        title\n      }\n    }\n  }\n": typeof types.NodesDocument,
    "\n  query Node($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Conversation {\n        conversationId\n      }\n    }\n  }\n": typeof types.NodeDocument,
    "\n  fragment CreatedConversation on CreateConversationPayload {\n    conversationId\n    conversationStatus\n    statusMessage\n  }\n": typeof types.CreatedConversationFragmentDoc,
    "\n  mutation CreateConversation($input: CreateConversationInput!) {\n    createConversation(input: $input) {\n      __typename\n      ... on CreateConversationPayload {\n        ...CreatedConversation\n        conversation {\n          ...ConversationFields\n        }\n      }\n      ... on UpstreamValidationError {\n        message\n        issues {\n          loc\n          msg\n          type\n        }\n      }\n      ... on UpstreamDomainError {\n        message\n        msgId\n      }\n    }\n  }\n": typeof types.CreateConversationDocument,
    "\n  mutation CreateConversationIdOnly($input: CreateConversationInput!) {\n    createConversation(input: $input) {\n      __typename\n      ...CreatedConversation\n      ... on Error {\n        message\n      }\n    }\n  }\n": typeof types.CreateConversationIdOnlyDocument,
    "\n  mutation AddGitProviderToken($input: AddGitProviderTokenInput!) {\n    addGitProviderToken(input: $input) {\n      __typename\n      ... on AddGitProviderTokenPayload {\n        statusMessage\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": typeof types.AddGitProviderTokenDocument,
    "\n  mutation UnsetProviderTokens {\n    unsetProviderTokens {\n      statusMessage\n      entries {\n        key\n        value\n      }\n    }\n  }\n": typeof types.UnsetProviderTokensDocument,
};
const documents: Documents = {
    "\n  fragment ConversationFields on Conversation {\n    id\n    conversationId\n    title\n    status\n    statusRaw\n    runtimeStatus\n    runtimeStatusRaw\n    selectedRepository\n    selectedBranch\n    gitProvider\n    gitProviderRaw\n    trigger\n    triggerRaw\n    numConnections\n    url\n    sessionApiKey\n    createdAt\n    lastUpdatedAt\n    prNumbers\n  }\n": types.ConversationFieldsFragmentDoc,
    "\n  query ListConversations(\n    $first: Int\n    $after: String\n    $last: Int\n    $before: String\n    $trigger: ConversationTrigger\n    $repository: String\n  ) {\n    conversations(\n      first: $first\n      after: $after\n      last: $last\n      before: $before\n      trigger: $trigger\n      repository: $repository\n    ) {\n      edges {\n        cursor\n        node {\n          id\n          conversationId\n          selectedRepository\n          trigger\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n": types.ListConversationsDocument,
    "\n  query GetConversation($id: ID!) {\n    conversation(id: $id) {\n      ...ConversationFields\n    }\n  }\n": types.GetConversationDocument,
    "\n  query ConversationV1Fields($id: ID!) {\n    conversation(id: $id) {\n      conversationId\n      executionStatus\n      executionStatusRaw\n      sandboxStatus\n      sandboxStatusRaw\n      llmModel\n      metrics {\n        accumulatedCost\n        maxBudgetPerTask\n        promptTokens\n        completionTokens\n        cacheReadTokens\n        cacheWriteTokens\n        reasoningTokens\n        contextWindow\n      }\n      parentConversationId\n      parentConversation {\n        id\n      }\n      subConversationIds\n      subConversations {\n        id\n      }\n    }\n  }\n": types.ConversationV1FieldsDocument,
    "\n  query ListThenLookUp($first: Int!, $id: ID!, $ids: [ID!]!) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id\n          title\n        }\n      }\n    }\n    conversation(id: $id) {\n      id\n      title\n    }\n    node(id: $id) {\n      id\n      ... on Conversation {\n        title\n      }\n    }\n    nodes(ids: $ids) {\n      id\n    }\n  }\n": types.ListThenLookUpDocument,
    "\n  query Nodes($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      __typename\n      id\n      ... on Conversation {\n        conversationId\n        title\n      }\n    }\n  }\n": types.NodesDocument,
    "\n  query Node($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Conversation {\n        conversationId\n      }\n    }\n  }\n": types.NodeDocument,
    "\n  fragment CreatedConversation on CreateConversationPayload {\n    conversationId\n    conversationStatus\n    statusMessage\n  }\n": types.CreatedConversationFragmentDoc,
    "\n  mutation CreateConversation($input: CreateConversationInput!) {\n    createConversation(input: $input) {\n      __typename\n      ... on CreateConversationPayload {\n        ...CreatedConversation\n        conversation {\n          ...ConversationFields\n        }\n      }\n      ... on UpstreamValidationError {\n        message\n        issues {\n          loc\n          msg\n          type\n        }\n      }\n      ... on UpstreamDomainError {\n        message\n        msgId\n      }\n    }\n  }\n": types.CreateConversationDocument,
    "\n  mutation CreateConversationIdOnly($input: CreateConversationInput!) {\n    createConversation(input: $input) {\n      __typename\n      ...CreatedConversation\n      ... on Error {\n        message\n      }\n    }\n  }\n": types.CreateConversationIdOnlyDocument,
    "\n  mutation AddGitProviderToken($input: AddGitProviderTokenInput!) {\n    addGitProviderToken(input: $input) {\n      __typename\n      ... on AddGitProviderTokenPayload {\n        statusMessage\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": types.AddGitProviderTokenDocument,
    "\n  mutation UnsetProviderTokens {\n    unsetProviderTokens {\n      statusMessage\n      entries {\n        key\n        value\n      }\n    }\n  }\n": types.UnsetProviderTokensDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ConversationFields on Conversation {\n    id\n    conversationId\n    title\n    status\n    statusRaw\n    runtimeStatus\n    runtimeStatusRaw\n    selectedRepository\n    selectedBranch\n    gitProvider\n    gitProviderRaw\n    trigger\n    triggerRaw\n    numConnections\n    url\n    sessionApiKey\n    createdAt\n    lastUpdatedAt\n    prNumbers\n  }\n"): (typeof documents)["\n  fragment ConversationFields on Conversation {\n    id\n    conversationId\n    title\n    status\n    statusRaw\n    runtimeStatus\n    runtimeStatusRaw\n    selectedRepository\n    selectedBranch\n    gitProvider\n    gitProviderRaw\n    trigger\n    triggerRaw\n    numConnections\n    url\n    sessionApiKey\n    createdAt\n    lastUpdatedAt\n    prNumbers\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ListConversations(\n    $first: Int\n    $after: String\n    $last: Int\n    $before: String\n    $trigger: ConversationTrigger\n    $repository: String\n  ) {\n    conversations(\n      first: $first\n      after: $after\n      last: $last\n      before: $before\n      trigger: $trigger\n      repository: $repository\n    ) {\n      edges {\n        cursor\n        node {\n          id\n          conversationId\n          selectedRepository\n          trigger\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n"): (typeof documents)["\n  query ListConversations(\n    $first: Int\n    $after: String\n    $last: Int\n    $before: String\n    $trigger: ConversationTrigger\n    $repository: String\n  ) {\n    conversations(\n      first: $first\n      after: $after\n      last: $last\n      before: $before\n      trigger: $trigger\n      repository: $repository\n    ) {\n      edges {\n        cursor\n        node {\n          id\n          conversationId\n          selectedRepository\n          trigger\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GetConversation($id: ID!) {\n    conversation(id: $id) {\n      ...ConversationFields\n    }\n  }\n"): (typeof documents)["\n  query GetConversation($id: ID!) {\n    conversation(id: $id) {\n      ...ConversationFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConversationV1Fields($id: ID!) {\n    conversation(id: $id) {\n      conversationId\n      executionStatus\n      executionStatusRaw\n      sandboxStatus\n      sandboxStatusRaw\n      llmModel\n      metrics {\n        accumulatedCost\n        maxBudgetPerTask\n        promptTokens\n        completionTokens\n        cacheReadTokens\n        cacheWriteTokens\n        reasoningTokens\n        contextWindow\n      }\n      parentConversationId\n      parentConversation {\n        id\n      }\n      subConversationIds\n      subConversations {\n        id\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConversationV1Fields($id: ID!) {\n    conversation(id: $id) {\n      conversationId\n      executionStatus\n      executionStatusRaw\n      sandboxStatus\n      sandboxStatusRaw\n      llmModel\n      metrics {\n        accumulatedCost\n        maxBudgetPerTask\n        promptTokens\n        completionTokens\n        cacheReadTokens\n        cacheWriteTokens\n        reasoningTokens\n        contextWindow\n      }\n      parentConversationId\n      parentConversation {\n        id\n      }\n      subConversationIds\n      subConversations {\n        id\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ListThenLookUp($first: Int!, $id: ID!, $ids: [ID!]!) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id\n          title\n        }\n      }\n    }\n    conversation(id: $id) {\n      id\n      title\n    }\n    node(id: $id) {\n      id\n      ... on Conversation {\n        title\n      }\n    }\n    nodes(ids: $ids) {\n      id\n    }\n  }\n"): (typeof documents)["\n  query ListThenLookUp($first: Int!, $id: ID!, $ids: [ID!]!) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id\n          title\n        }\n      }\n    }\n    conversation(id: $id) {\n      id\n      title\n    }\n    node(id: $id) {\n      id\n      ... on Conversation {\n        title\n      }\n    }\n    nodes(ids: $ids) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Nodes($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      __typename\n      id\n      ... on Conversation {\n        conversationId\n        title\n      }\n    }\n  }\n"): (typeof documents)["\n  query Nodes($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      __typename\n      id\n      ... on Conversation {\n        conversationId\n        title\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Node($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Conversation {\n        conversationId\n      }\n    }\n  }\n"): (typeof documents)["\n  query Node($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Conversation {\n        conversationId\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment CreatedConversation on CreateConversationPayload {\n    conversationId\n    conversationStatus\n    statusMessage\n  }\n"): (typeof documents)["\n  fragment CreatedConversation on CreateConversationPayload {\n    conversationId\n    conversationStatus\n    statusMessage\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateConversation($input: CreateConversationInput!) {\n    createConversation(input: $input) {\n      __typename\n      ... on CreateConversationPayload {\n        ...CreatedConversation\n        conversation {\n          ...ConversationFields\n        }\n      }\n      ... on UpstreamValidationError {\n        message\n        issues {\n          loc\n          msg\n          type\n        }\n      }\n      ... on UpstreamDomainError {\n        message\n        msgId\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateConversation($input: CreateConversationInput!) {\n    createConversation(input: $input) {\n      __typename\n      ... on CreateConversationPayload {\n        ...CreatedConversation\n        conversation {\n          ...ConversationFields\n        }\n      }\n      ... on UpstreamValidationError {\n        message\n        issues {\n          loc\n          msg\n          type\n        }\n      }\n      ... on UpstreamDomainError {\n        message\n        msgId\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateConversationIdOnly($input: CreateConversationInput!) {\n    createConversation(input: $input) {\n      __typename\n      ...CreatedConversation\n      ... on Error {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateConversationIdOnly($input: CreateConversationInput!) {\n    createConversation(input: $input) {\n      __typename\n      ...CreatedConversation\n      ... on Error {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddGitProviderToken($input: AddGitProviderTokenInput!) {\n    addGitProviderToken(input: $input) {\n      __typename\n      ... on AddGitProviderTokenPayload {\n        statusMessage\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation AddGitProviderToken($input: AddGitProviderTokenInput!) {\n    addGitProviderToken(input: $input) {\n      __typename\n      ... on AddGitProviderTokenPayload {\n        statusMessage\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UnsetProviderTokens {\n    unsetProviderTokens {\n      statusMessage\n      entries {\n        key\n        value\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation UnsetProviderTokens {\n    unsetProviderTokens {\n      statusMessage\n      entries {\n        key\n        value\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;