/**
 * The Relay fragment set that test/clients/relay.test.ts compiles with relay-compiler against
 * schema.graphql (so a schema change that breaks Relay fails CI) and then runs with relay-runtime.
 * The `graphql` tags are never evaluated: only relay-compiler reads this file.
 */
import { graphql } from 'relay-runtime';

/** A row of the list: seven fields (Relay adds `id`, cursors and `__typename`s). */
export const row = graphql`
  fragment RelayConversationRow_conversation on Conversation {
    id
    conversationId
    title
    status
    trigger
    createdAt
    lastUpdatedAt
  }
`;

/** The list as `usePaginationFragment` pages it: `first` is a variable (`$count`). */
export const list = graphql`
  fragment RelayConversationList_query on Query
  @argumentDefinitions(count: { type: "Int", defaultValue: 100 }, cursor: { type: "String" })
  @refetchable(queryName: "RelayConversationListPaginationQuery") {
    conversations(first: $count, after: $cursor) @connection(key: "RelayConversationList_conversations") {
      edges {
        node {
          ...RelayConversationRow_conversation
        }
      }
    }
  }
`;

/**
 * The list's root query. `$count` is passed on as a variable: with the fragment's `defaultValue` alone,
 * Relay inlines `first: 100` as a literal in the first page's text.
 */
export const listQuery = graphql`
  query RelayConversationListQuery($count: Int!) {
    ...RelayConversationList_query @arguments(count: $count)
  }
`;

/** The same list with `first: 100` written as a literal. */
export const literalQuery = graphql`
  query RelayLiteralPageQuery($cursor: String) {
    conversations(first: 100, after: $cursor) @connection(key: "RelayLiteralPage_conversations") {
      edges {
        node {
          ...RelayConversationRow_conversation
        }
      }
    }
  }
`;

/** A detail view refetched through `Query.node` (the Node interface Relay relies on). */
export const detail = graphql`
  fragment RelayConversationDetail_conversation on Conversation
  @refetchable(queryName: "RelayConversationDetailRefetchQuery") {
    id
    title
    status
  }
`;

/** The union mutation with `statusMessage` beside `Error.message`. */
export const create = graphql`
  mutation RelayCreateConversationMutation($input: CreateConversationInput!) {
    createConversation(input: $input) {
      __typename
      ... on CreateConversationPayload {
        conversationId
        statusMessage
      }
      ... on Error {
        message
      }
    }
  }
`;

/** A live stream over graphql-ws. */
export const events = graphql`
  subscription RelayConversationEventsSubscription($id: ID!) {
    conversationEvents(conversationId: $id, fromBeginning: true) {
      __typename
      eventId
      cursor
      ... on AgentMessageEvent {
        content
      }
    }
  }
`;

/** A chat view: the newest events first read with `last`, older pages with `before` (backward @connection). */
export const transcript = graphql`
  fragment RelayTranscript_conversation on Conversation
  @argumentDefinitions(count: { type: "Int", defaultValue: 50 }, cursor: { type: "String" })
  @refetchable(queryName: "RelayTranscriptPaginationQuery") {
    events(last: $count, before: $cursor) @connection(key: "RelayTranscript_events") {
      edges {
        node {
          __typename
          eventId
          message
        }
      }
    }
  }
`;

/** Delete with Relay's @deleteRecord on the payload's global id. */
export const remove = graphql`
  mutation RelayDeleteConversationMutation($input: DeleteConversationInput!) {
    deleteConversation(input: $input) {
      __typename
      ... on DeleteConversationPayload {
        deletedId @deleteRecord
      }
      ... on Error {
        message
      }
    }
  }
`;
