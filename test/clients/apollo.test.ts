/**
 * Apollo Client 4, configured as docs/clients.md says, against the real gateway and local service:
 * `relayStylePagination` pages 250 conversations with `first: 100` as a variable and as a literal;
 * `PersistedQueryLink` (sha256 from node:crypto, hashed queries over GET) registers each document once
 * and then sends hashes only; a union mutation selects `statusMessage` beside `Error.message`;
 * `GraphQLWsLink` carries a subscription. Every test runs on both upstream APIs (V0 and V1); the
 * paging tests share one seeded service per API.
 */
import { createHash } from 'node:crypto';
import {
  ApolloClient,
  ApolloLink,
  gql,
  HttpLink,
  InMemoryCache,
  NetworkStatus,
  type OperationVariables,
  type TypedDocumentNode,
} from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { relayStylePagination } from '@apollo/client/utilities';
import { OperationTypeNode } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { APIS } from '../helpers/both-apis.ts';
import {
  type ClientStack,
  CONVERSATION_FIELDS,
  clientStackForTest,
  PAGE,
  possibleTypesFromSchema,
  SEEDED,
  type SeededService,
  Seen,
  startSeededService,
  WebSocket,
} from './helpers.ts';

/** One HTTP request as the gateway received it, with what it answered. */
interface Exchange {
  method: string;
  sentQuery: boolean;
  sentHash: boolean;
  errorCodes: unknown[];
}

/** docs/clients.md's Apollo setup, plus a fetch that records each exchange. */
function apolloClient(stack: ClientStack) {
  const exchanges: Exchange[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    const sent =
      method === 'GET'
        ? {
            query: url.searchParams.get('query'),
            extensions: JSON.parse(url.searchParams.get('extensions') ?? '{}'),
          }
        : JSON.parse(String(init?.body));
    const response = await fetch(input, init);
    const body = await response.clone().json();
    exchanges.push({
      method,
      sentQuery: typeof sent.query === 'string' && sent.query !== '',
      sentHash: typeof sent.extensions?.persistedQuery?.sha256Hash === 'string',
      errorCodes: (body.errors ?? []).map(
        (error: { extensions?: { code?: unknown } }) => error.extensions?.code,
      ),
    });
    return response;
  };
  const ws = createClient({ url: stack.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
  onTestFinished(() => ws.dispose());

  const http = new PersistedQueryLink({
    sha256: (text) => createHash('sha256').update(text).digest('hex'),
    useGETForHashedQueries: true,
  }).concat(new HttpLink({ uri: stack.gateway.url, fetch: recordingFetch }));
  const link = ApolloLink.split(
    ({ operationType }) => operationType === OperationTypeNode.SUBSCRIPTION,
    new GraphQLWsLink(ws),
    http,
  );
  const client = new ApolloClient({
    link,
    cache: new InMemoryCache({
      // The result unions and the interfaces (Error, ConversationEvent, Node), so fragments on them
      // match from the cache.
      possibleTypes: possibleTypesFromSchema(),
      typePolicies: {
        // Filters are key arguments: each filter combination is its own list.
        Query: { fields: { conversations: relayStylePagination(['trigger', 'repository']) } },
      },
    }),
  });
  onTestFinished(() => client.stop());
  return { client, exchanges };
}

type Page = {
  conversations: {
    edges: Array<{ cursor: string; node: { conversationId: string } }>;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
};

const BY_VARIABLE: TypedDocumentNode<Page, { first: number; after?: string | null }> = gql`
  query ApolloPageByVariable($first: Int!, $after: String) {
    conversations(first: $first, after: $after) {
      edges { cursor node { ${CONVERSATION_FIELDS} } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;
const BY_LITERAL: TypedDocumentNode<Page, { after?: string | null }> = gql`
  query ApolloPageByLiteral($after: String) {
    conversations(first: 100, after: $after) {
      edges { cursor node { ${CONVERSATION_FIELDS} } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

/** Pages with watchQuery + fetchMore as an app does; relayStylePagination merges the pages in the cache. */
async function pageThrough<V extends OperationVariables>(
  client: ApolloClient,
  query: TypedDocumentNode<Page, V>,
  variables: V,
): Promise<string[]> {
  const observable = client.watchQuery({ query, variables });
  // Settled results only (NetworkStatus.ready): fetchMore first re-emits the old page while loading.
  const settled = new Seen<Page>();
  const subscription = observable.subscribe((result) => {
    if (result.error) settled.fail(result.error);
    else if (result.networkStatus === NetworkStatus.ready && result.dataState === 'complete') {
      settled.push(result.data as Page);
    }
  });
  onTestFinished(() => subscription.unsubscribe());
  await settled.until((items) => items.length > 0);
  let requests = 1;
  for (;;) {
    const current = settled.items.at(-1) as Page;
    if (!current.conversations.pageInfo.hasNextPage) break;
    const had = current.conversations.edges.length;
    const more = await observable.fetchMore({
      variables: { after: current.conversations.pageInfo.endCursor } as unknown as Partial<V>,
    });
    expect(more.error).toBeUndefined();
    requests++;
    await settled.until((items) => (items.at(-1) as Page).conversations.edges.length > had);
  }
  expect(requests).toBe(Math.ceil(SEEDED / PAGE));
  return (settled.items.at(-1) as Page).conversations.edges.map((edge) => edge.node.conversationId);
}

describe.each(APIS)('Apollo Client 4 on %s', (api) => {
  let upstream: SeededService;
  beforeAll(async () => {
    upstream = await startSeededService(api);
  }, 120_000);
  afterAll(() => upstream?.service.close());

  it('pages 250 conversations with first: 100 as a variable through relayStylePagination, over persisted queries', async () => {
    const stack = await clientStackForTest(api, { upstream });
    const { client, exchanges } = apolloClient(stack);

    const ids = await pageThrough(client, BY_VARIABLE, { first: PAGE });
    expect(ids).toEqual(stack.newestFirst);
    // The APQ handshake: a hash-only GET misses, the link resends the document by POST (registering
    // it), and the next pages send the hash alone over GET.
    expect(exchanges).toEqual([
      { method: 'GET', sentQuery: false, sentHash: true, errorCodes: ['PERSISTED_QUERY_NOT_FOUND'] },
      { method: 'POST', sentQuery: true, sentHash: true, errorCodes: [] },
      { method: 'GET', sentQuery: false, sentHash: true, errorCodes: [] },
      { method: 'GET', sentQuery: false, sentHash: true, errorCodes: [] },
    ]);
  });

  it('pages 250 conversations with first: 100 as a literal (with every __typename Apollo adds)', async () => {
    const stack = await clientStackForTest(api, { upstream });
    const { client, exchanges } = apolloClient(stack);

    const ids = await pageThrough(client, BY_LITERAL, {});
    expect(ids).toEqual(stack.newestFirst);
    expect(exchanges.flatMap((exchange) => exchange.errorCodes)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
  });

  it('selects statusMessage and Error.message in one union selection, and follows a subscription over GraphQLWsLink', async () => {
    // Its own service: the conversation it creates would join the paging tests' list.
    const stack = await clientStackForTest(api);
    const { client } = apolloClient(stack);

    const created = await client.mutate({
      mutation: gql`
        mutation ApolloCreate($input: CreateConversationInput!) {
          createConversation(input: $input) {
            __typename
            ... on CreateConversationPayload { conversationId conversationStatus statusMessage }
            ... on Error { message }
          }
        }
      `,
      variables: { input: { initialUserMessage: 'hello from apollo' } },
    });
    expect(created.error).toBeUndefined();
    const payload = (created.data as { createConversation: Record<string, unknown> }).createConversation;
    expect(payload).toMatchObject({
      __typename: 'CreateConversationPayload',
      conversationStatus: 'STARTING',
      statusMessage: null,
    });

    type Event = { __typename: string; eventId: number | null; cursor: string; content?: string };
    const events = new Seen<Event>();
    const subscription = client
      .subscribe({
        query: gql`
          subscription ApolloEvents($id: ID!) {
            conversationEvents(conversationId: $id, fromBeginning: true) {
              __typename
              eventId
              cursor
              ... on AgentMessageEvent { content }
            }
          }
        `,
        variables: { id: payload.conversationId },
        // Events are a stream, not cached entities (they have no id to normalize by).
        fetchPolicy: 'no-cache',
      })
      .subscribe((result) => {
        if (result.error) events.fail(result.error);
        const event = (result.data as { conversationEvents?: Event } | undefined)?.conversationEvents;
        if (event) events.push(event);
      });
    onTestFinished(() => subscription.unsubscribe());
    await events.until((items) => items.some((event) => event.content === 'You said: hello from apollo'));
    expect(events.items.find((event) => event.__typename === 'AgentMessageEvent')).toMatchObject({
      content: 'You said: hello from apollo',
      cursor: expect.any(String),
      // V1 event ids are strings, so eventId is null there; `cursor` is the resume token on both
      // (docs/live-events.md, docs/upstream-apis.md).
      eventId: api === 'v0' ? expect.any(Number) : null,
    });
    expect(new Set(events.items.map((event) => event.cursor)).size).toBeGreaterThan(1);
  });
});
