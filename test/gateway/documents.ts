/**
 * Every operation the gateway tests send, typed by GraphQL Code Generator (`npm run codegen`): a
 * renamed or removed field breaks `tsc --noEmit`, not production. Only test/gateway/ sends them, and
 * codegen.ts names this file as its documents, so it lives here rather than in test/helpers/.
 */
import { graphql } from '../generated/index.ts';

export const ConversationFieldsFragment = graphql(`
  fragment ConversationFields on Conversation {
    id
    conversationId
    title
    status
    statusRaw
    runtimeStatus
    runtimeStatusRaw
    selectedRepository
    selectedBranch
    gitProvider
    gitProviderRaw
    trigger
    triggerRaw
    numConnections
    url
    sessionApiKey
    createdAt
    lastUpdatedAt
    prNumbers
  }
`);

export const ListConversationsDocument = graphql(`
  query ListConversations(
    $first: Int
    $after: String
    $last: Int
    $before: String
    $trigger: ConversationTrigger
    $repository: String
  ) {
    conversations(
      first: $first
      after: $after
      last: $last
      before: $before
      trigger: $trigger
      repository: $repository
    ) {
      edges {
        cursor
        node {
          id
          conversationId
          selectedRepository
          trigger
        }
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
    }
  }
`);

export const GetConversationDocument = graphql(`
  query GetConversation($id: ID!) {
    conversation(id: $id) {
      ...ConversationFields
    }
  }
`);

export const ConversationV1FieldsDocument = graphql(`
  query ConversationV1Fields($id: ID!) {
    conversation(id: $id) {
      conversationId
      executionStatus
      executionStatusRaw
      sandboxStatus
      sandboxStatusRaw
      llmModel
      metrics {
        accumulatedCost
        maxBudgetPerTask
        promptTokens
        completionTokens
        cacheReadTokens
        cacheWriteTokens
        reasoningTokens
        contextWindow
      }
      parentConversationId
      parentConversation {
        id
      }
      subConversationIds
      subConversations {
        id
      }
    }
  }
`);

export const ListThenLookUpDocument = graphql(`
  query ListThenLookUp($first: Int!, $id: ID!, $ids: [ID!]!) {
    conversations(first: $first) {
      edges {
        node {
          id
          title
        }
      }
    }
    conversation(id: $id) {
      id
      title
    }
    node(id: $id) {
      id
      ... on Conversation {
        title
      }
    }
    nodes(ids: $ids) {
      id
    }
  }
`);

export const NodesDocument = graphql(`
  query Nodes($ids: [ID!]!) {
    nodes(ids: $ids) {
      __typename
      id
      ... on Conversation {
        conversationId
        title
      }
    }
  }
`);

export const NodeDocument = graphql(`
  query Node($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on Conversation {
        conversationId
      }
    }
  }
`);

export const CreatedConversationFragment = graphql(`
  fragment CreatedConversation on CreateConversationPayload {
    conversationId
    conversationStatus
    statusMessage
  }
`);

export const CreateConversationDocument = graphql(`
  mutation CreateConversation($input: CreateConversationInput!) {
    createConversation(input: $input) {
      __typename
      ... on CreateConversationPayload {
        ...CreatedConversation
        conversation {
          ...ConversationFields
        }
      }
      ... on UpstreamValidationError {
        message
        issues {
          loc
          msg
          type
        }
      }
      ... on UpstreamDomainError {
        message
        msgId
      }
    }
  }
`);

export const CreateConversationIdOnlyDocument = graphql(`
  mutation CreateConversationIdOnly($input: CreateConversationInput!) {
    createConversation(input: $input) {
      __typename
      ...CreatedConversation
      ... on Error {
        message
      }
    }
  }
`);

export const AddGitProviderTokenDocument = graphql(`
  mutation AddGitProviderToken($input: AddGitProviderTokenInput!) {
    addGitProviderToken(input: $input) {
      __typename
      ... on AddGitProviderTokenPayload {
        statusMessage
      }
      ... on Error {
        message
      }
    }
  }
`);

export const UnsetProviderTokensDocument = graphql(`
  mutation UnsetProviderTokens {
    unsetProviderTokens {
      statusMessage
      entries {
        key
        value
      }
    }
  }
`);
