/**
 * urql 6 (@urql/core) with Graphcache, configured as docs/clients.md says, against the real
 * gateway and local service: `relayPagination` merges 250 conversations paged with `first: 100` as a
 * variable and as a literal; `persistedExchange` speaks APQ (hash over GET, document on a miss);
 * `subscriptionExchange` over graphql-ws carries a subscription. Every test runs on both upstream APIs
 * (V0 and V1); the paging tests share one seeded service per API.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client, fetchExchange, gql, subscriptionExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { persistedExchange } from '@urql/exchange-persisted';
import { buildSchema, introspectionFromSchema } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { APIS } from '../helpers/both-apis.ts';
import {
  type ClientStack,
  CONVERSATION_FIELDS,
  clientStackForTest,
  PAGE,
  SCHEMA_PATH,
  SEEDED,
  type SeededService,
  Seen,
  startSeededService,
  WebSocket,
} from './helpers.ts';

/** docs/clients.md's urql setup, plus a fetch that records method and whether the document was sent. */
function urqlClient(stack: ClientStack) {
  const requests: Array<{ method: string; sentQuery: boolean; errorCodes: unknown[] }> = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const method = init?.method ?? 'GET';
    const sentQuery =
      method === 'GET'
        ? new URL(String(input)).searchParams.has('query')
        : typeof JSON.parse(String(init?.body)).query === 'string';
    const response = await fetch(input, init);
    const body = await response.clone().json();
    requests.push({
      method,
      sentQuery,
      errorCodes: (body.errors ?? []).map(
        (error: { extensions?: { code?: unknown } }) => error.extensions?.code,
      ),
    });
    return response;
  };
  const ws = createClient({ url: stack.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
  onTestFinished(() => ws.dispose());
  const client = new Client({
    url: stack.gateway.url,
    fetch: recordingFetch,
    exchanges: [
      cacheExchange({
        // Schema awareness: unions and interfaces resolve exactly, partial results are allowed.
        schema: introspectionFromSchema(buildSchema(readFileSync(SCHEMA_PATH, 'utf8'))),
        // Connection wrappers have no id: they are embedded in their parent, not normalized.
        keys: { ConversationConnection: () => null, ConversationEdge: () => null, PageInfo: () => null },
        resolvers: { Query: { conversations: relayPagination() } },
      }),
      persistedExchange({
        generateHash: async (query) => createHash('sha256').update(query).digest('hex'),
        preferGetForPersistedQueries: true,
      }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({
            unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink),
          }),
        }),
      }),
    ],
  });
  return { client, requests };
}

type Page = {
  conversations: {
    edges: Array<{ node: { conversationId: string } }>;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
};

const BY_VARIABLE = gql<Page, { first: number; after?: string | null }>`
  query UrqlPageByVariable($first: Int!, $after: String) {
    conversations(first: $first, after: $after) {
      edges { cursor node { ${CONVERSATION_FIELDS} } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;
const BY_LITERAL = gql<Page, { after?: string | null }>`
  query UrqlPageByLiteral($after: String) {
    conversations(first: 100, after: $after) {
      edges { cursor node { ${CONVERSATION_FIELDS} } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

/** Asks for the next page each time; relayPagination answers every page query with all pages so far. */
async function pageThrough(
  client: Client,
  query: typeof BY_VARIABLE | typeof BY_LITERAL,
  variables: Record<string, unknown>,
): Promise<string[]> {
  let after: string | null = null;
  let requests = 0;
  let edges: Page['conversations']['edges'] = [];
  for (;;) {
    const result: { data?: Page; error?: Error } = await client
      .query(query, { ...variables, after } as never)
      .toPromise();
    if (result.error || !result.data) throw result.error ?? new Error('no data');
    requests++;
    const connection: Page['conversations'] = result.data.conversations;
    expect(connection.edges.length).toBe(Math.min(requests * PAGE, SEEDED));
    edges = connection.edges;
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  expect(requests).toBe(Math.ceil(SEEDED / PAGE));
  return edges.map((edge) => edge.node.conversationId);
}

describe.each(APIS)('urql 6 with Graphcache on %s', (api) => {
  let upstream: SeededService;
  beforeAll(async () => {
    upstream = await startSeededService(api);
  }, 120_000);
  afterAll(() => upstream?.service.close());

  it('pages 250 conversations with first: 100 as a variable through relayPagination, over persisted queries', async () => {
    const stack = await clientStackForTest(api, { upstream });
    const { client, requests } = urqlClient(stack);

    expect(await pageThrough(client, BY_VARIABLE, { first: PAGE })).toEqual(stack.newestFirst);
    expect(requests).toEqual([
      { method: 'GET', sentQuery: false, errorCodes: ['PERSISTED_QUERY_NOT_FOUND'] },
      { method: 'GET', sentQuery: true, errorCodes: [] },
      { method: 'GET', sentQuery: false, errorCodes: [] },
      { method: 'GET', sentQuery: false, errorCodes: [] },
    ]);
  });

  it('pages 250 conversations with first: 100 as a literal (with the __typenames urql adds)', async () => {
    const stack = await clientStackForTest(api, { upstream });
    const { client } = urqlClient(stack);

    expect(await pageThrough(client, BY_LITERAL, {})).toEqual(stack.newestFirst);
  });

  it('creates a conversation (statusMessage beside Error.message) and follows its events over subscriptionExchange', async () => {
    // Its own service: the conversation it creates would join the paging tests' list.
    const stack = await clientStackForTest(api);
    const { client } = urqlClient(stack);

    const created = await client
      .mutation(
        gql`
          mutation UrqlCreate($input: CreateConversationInput!) {
            createConversation(input: $input) {
              __typename
              ... on CreateConversationPayload { conversationId statusMessage }
              ... on Error { message }
            }
          }
        `,
        { input: { initialUserMessage: 'hello from urql' } },
      )
      .toPromise();
    expect(created.error).toBeUndefined();
    const payload = created.data.createConversation;
    expect(payload).toMatchObject({ __typename: 'CreateConversationPayload', statusMessage: null });

    const events = new Seen<{
      __typename: string;
      eventId: number | null;
      cursor: string;
      content?: string;
    }>();
    const { unsubscribe } = client
      .subscription(
        gql`
          subscription UrqlEvents($id: ID!) {
            conversationEvents(conversationId: $id, fromBeginning: true) {
              __typename
              eventId
              cursor
              ... on AgentMessageEvent { content }
            }
          }
        `,
        { id: payload.conversationId },
      )
      .subscribe((result) => {
        if (result.error) events.fail(result.error);
        else if (result.data) events.push(result.data.conversationEvents);
      });
    onTestFinished(unsubscribe);
    await events.until((items) => items.some((event) => event.content === 'You said: hello from urql'));
    expect(events.items.find((event) => event.__typename === 'AgentMessageEvent')).toMatchObject({
      content: 'You said: hello from urql',
      cursor: expect.any(String),
      // V1 event ids are strings, so eventId is null there; `cursor` is the resume token on both
      // (docs/live-events.md, docs/upstream-apis.md).
      eventId: api === 'v0' ? expect.any(Number) : null,
    });
  });
});
