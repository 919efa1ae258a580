/**
 * The graph's behaviour on both OpenHands APIs: the same operations, run against the real bundled
 * local service speaking V0 (0.53) and V1 (app server + agent servers), with the gateway's adapter
 * for each. Everything is seeded through the graph itself, so one test body serves both APIs; where
 * the APIs differ on purpose (the upstream calls a batch costs), the expectation names the API.
 */
import { describe, expect, it } from 'vitest';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';

const KEY = 'alice-key';
const APIS = ['v0', 'v1'] as const;

type Json = Record<string, unknown>;
type Answer = { data?: Json | null; errors?: Array<{ message: string; extensions?: Json }> };

/** POSTs a document with the test key; answers the parsed body. */
async function gql(gateway: TestGateway, query: string, variables: Json = {}, key = KEY): Promise<Answer> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': key },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as Answer;
}

const CREATE = `mutation($input: CreateConversationInput!) {
  createConversation(input: $input) {
    __typename
    ... on CreateConversationPayload { conversationId conversationStatus conversation { conversationId status } }
    ... on Error { message }
  }
}`;
const GET = `query($id: ID!) { conversation(id: $id) { conversationId title status selectedRepository trigger } }`;
const LIST = `query($first: Int, $after: String, $repository: String) {
  conversations(first: $first, after: $after, repository: $repository) {
    edges { cursor node { conversationId selectedRepository } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const EVENTS = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  conversation(id: $id) {
    events(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { __typename source ... on UserMessageEvent { content } ... on AgentMessageEvent { content } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
}`;
const SEND = `mutation($input: SendMessageInput!) {
  sendMessage(input: $input) { __typename ... on SendMessagePayload { delivery } ... on Error { message } }
}`;

async function create(gateway: TestGateway, input: Json = {}): Promise<string> {
  const { data, errors } = await gql(gateway, CREATE, { input });
  expect(errors).toBeUndefined();
  const created = data?.createConversation as Json;
  expect(created.__typename).toBe('CreateConversationPayload');
  return created.conversationId as string;
}

/** Waits until the conversation reads `status`. */
async function until(gateway: TestGateway, id: string, status: string): Promise<void> {
  await expect
    .poll(async () => ((await gql(gateway, GET, { id })).data?.conversation as Json | null)?.status, {
      timeout: 5_000,
      interval: 20,
    })
    .toBe(status);
}

/**
 * Waits until the conversation has started: RUNNING, or STOPPED when later starts already paused it
 * (V1's app server keeps at most five sandboxes running per user, as Docker deployments do).
 */
async function started(gateway: TestGateway, id: string): Promise<void> {
  await expect
    .poll(async () => ((await gql(gateway, GET, { id })).data?.conversation as Json | null)?.status, {
      timeout: 5_000,
      interval: 20,
    })
    .toMatch(/^(RUNNING|STOPPED)$/);
}

/** The agent's events so far, oldest first (forward, one page of up to 100). */
async function history(gateway: TestGateway, id: string, args: Json = { first: 100 }) {
  const { data, errors } = await gql(gateway, EVENTS, { id, ...args });
  expect(errors).toBeUndefined();
  const conversation = data?.conversation as
    | { events: { edges: Array<{ cursor: string; node: Json }>; pageInfo: Json } }
    | undefined;
  if (!conversation) throw new Error('no conversation in the answer');
  return conversation.events;
}

describe.each(APIS)('the graph on the %s API', (api) => {
  const start = (options: Parameters<typeof serviceAndGatewayForTest>[0] = {}) =>
    serviceAndGatewayForTest({ api, service: { sessionApiKeys: [KEY] }, ...options });

  it('creates a conversation: its id and STARTING at once, readable at once, RUNNING once started', async () => {
    const { gateway } = await start();
    const { data, errors } = await gql(gateway, CREATE, { input: { initialUserMessage: 'hello' } });
    expect(errors).toBeUndefined();
    const created = data?.createConversation as Json;
    expect(created).toMatchObject({
      __typename: 'CreateConversationPayload',
      conversationStatus: 'STARTING',
    });
    const id = created.conversationId as string;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    // Read in the same operation as the create: it exists already (V1: from its start task).
    expect(created.conversation).toMatchObject({ conversationId: id });
    expect(['STARTING', 'RUNNING']).toContain((created.conversation as Json).status);
    await until(gateway, id, 'RUNNING');
    expect((await gql(gateway, GET, { id })).data?.conversation).toMatchObject({
      conversationId: id,
      trigger: 'GUI',
    });
  });

  it('lists newest first and pages forward with cursors', async () => {
    const { gateway } = await start();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await create(gateway));
    // V1 lists a conversation once its start task made it one.
    for (const id of ids) await started(gateway, id);
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 5; pages++) {
      const { data, errors } = await gql(gateway, LIST, { first: 2, after });
      expect(errors).toBeUndefined();
      const connection = data?.conversations as {
        edges: Array<{ node: Json }>;
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
      seen.push(...connection.edges.map((edge) => edge.node.conversationId as string));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('filters by repository (on the gateway where the API cannot), refilling short pages', async () => {
    const { gateway } = await start({ paging: { filteredPageSize: 2, maxUpstreamCalls: 10 } });
    const stored = await gql(
      gateway,
      `mutation { addGitProviderToken(input: { provider: GITHUB, token: "ghp_seed_token" }) { __typename } }`,
    );
    expect(stored.errors).toBeUndefined();
    const wanted: string[] = [];
    const all: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = await create(
        gateway,
        i % 3 === 0 ? { repository: 'acme/widgets', gitProvider: 'GITHUB' } : {},
      );
      all.push(id);
      if (i % 3 === 0) wanted.push(id);
    }
    // Settled first: one that became a conversation mid-walk would shift the offset pages under it.
    for (const id of all) await started(gateway, id);
    const { data, errors } = await gql(gateway, LIST, { first: 5, repository: 'acme/widgets' });
    expect(errors).toBeUndefined();
    const connection = data?.conversations as { edges: Array<{ node: Json }>; pageInfo: Json };
    // V1 orders by when the start task made the conversation, V0 by the create call: the same set.
    expect(connection.edges.map((edge) => edge.node.conversationId).sort()).toEqual([...wanted].sort());
    expect(connection.edges.every((edge) => edge.node.selectedRepository === 'acme/widgets')).toBe(true);
    expect(connection.pageInfo.hasNextPage).toBe(false);
  });

  it('looks conversations up by raw and global id in one operation; unknown ids are null', async () => {
    const { gateway } = await start();
    const ids = [await create(gateway), await create(gateway), await create(gateway)];
    await Promise.all(ids.map((id) => until(gateway, id, 'RUNNING')));
    const unknown = 'f'.repeat(32);
    gateway.calls.length = 0;
    const { data, errors } = await gql(
      gateway,
      `query($a: ID!, $b: ID!, $ids: [ID!]!) {
        a: conversation(id: $a) { conversationId }
        b: node(id: $b) { ... on Conversation { conversationId } }
        nodes(ids: $ids) { ... on Conversation { conversationId } }
      }`,
      {
        a: ids[0],
        b: encodeGlobalId('Conversation', ids[1] as string),
        ids: [ids[2], unknown].map((id) => encodeGlobalId('Conversation', id as string)),
      },
    );
    expect(errors).toBeUndefined();
    expect(data).toEqual({
      a: { conversationId: ids[0] },
      b: { conversationId: ids[1] },
      nodes: [{ conversationId: ids[2] }, null],
    });
    // V0 reads one conversation per call; V1 reads them all in one `ids=` call (the unknown one
    // then costs one start-task search: it might be a conversation still starting).
    if (api === 'v0') expect(gateway.countCalls('GET', '/api/conversations/')).toBe(4);
    else {
      expect(gateway.countCalls('GET', '/api/v1/app-conversations?')).toBe(1);
      expect(gateway.countCalls('GET', '/api/v1/app-conversations/start-tasks/search')).toBe(1);
    }
  });

  it('renames, stops, starts and deletes', async () => {
    const { gateway } = await start();
    const id = await create(gateway);
    await until(gateway, id, 'RUNNING');
    const rename = (title: string) =>
      gql(
        gateway,
        `mutation($id: ID!, $title: String!) { renameConversation(input: { conversationId: $id, title: $title }) {
          __typename ... on RenameConversationPayload { conversation { title } }
          ... on UpstreamValidationError { issues { loc type } } } }`,
        { id, title },
      );
    expect(await rename('  Renamed  ')).toEqual({
      data: {
        renameConversation: { __typename: 'RenameConversationPayload', conversation: { title: 'Renamed' } },
      },
    });
    // The same bounds on both: 1..200 characters once stripped.
    for (const [title, type] of [
      ['   ', 'string_too_short'],
      ['x'.repeat(201), 'string_too_long'],
    ]) {
      expect((await rename(title as string)).data?.renameConversation).toEqual({
        __typename: 'UpstreamValidationError',
        issues: [{ loc: ['body', 'title'], type }],
      });
    }
    expect((await gql(gateway, GET, { id })).data?.conversation).toMatchObject({ title: 'Renamed' });
    const stopped = await gql(
      gateway,
      `mutation($id: ID!) { stopConversation(input: { conversationId: $id }) {
        __typename ... on StopConversationPayload { wasRunning conversation { status } } } }`,
      { id },
    );
    expect(stopped.errors).toBeUndefined();
    expect(stopped.data?.stopConversation).toMatchObject({
      __typename: 'StopConversationPayload',
      wasRunning: true,
    });
    await until(gateway, id, 'STOPPED');
    const started = await gql(
      gateway,
      `mutation($id: ID!) { startConversation(input: { conversationId: $id }) {
        __typename ... on StartConversationPayload { conversation { conversationId } } } }`,
      { id },
    );
    expect(started.data?.startConversation).toEqual({
      __typename: 'StartConversationPayload',
      conversation: { conversationId: id },
    });
    await until(gateway, id, 'RUNNING');
    const deleted = await gql(
      gateway,
      `mutation($id: ID!) { deleteConversation(input: { conversationId: $id }) {
        __typename ... on DeleteConversationPayload { conversationId } } }`,
      { id },
    );
    expect(deleted.data?.deleteConversation).toEqual({
      __typename: 'DeleteConversationPayload',
      conversationId: id,
    });
    expect((await gql(gateway, GET, { id })).data?.conversation).toBeNull();
    const again = await gql(
      gateway,
      `mutation($id: ID!) { deleteConversation(input: { conversationId: $id }) { __typename } }`,
      { id },
    );
    expect(again.data?.deleteConversation).toEqual({ __typename: 'ConversationNotFoundError' });
  });

  it("another caller's conversation is not found: not listed, not readable, not changeable", async () => {
    const OTHER = 'bob-key';
    const { gateway } = await start({ service: { sessionApiKeys: [KEY, OTHER] } });
    const id = await create(gateway);
    await started(gateway, id);
    const asOther = (query: string) => gql(gateway, query, { id }, OTHER);
    expect(
      await asOther(
        `query($id: ID!) { conversation(id: $id) { conversationId } conversations(first: 5) { edges { cursor } } }`,
      ),
    ).toEqual({ data: { conversation: null, conversations: { edges: [] } } });
    for (const mutation of ['deleteConversation', 'stopConversation', 'startConversation']) {
      const answer = await asOther(
        `mutation($id: ID!) { ${mutation}(input: { conversationId: $id }) { __typename } }`,
      );
      expect(answer.data?.[mutation], mutation).toEqual({ __typename: 'ConversationNotFoundError' });
    }
    const sent =
      await asOther(`mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "x" }) {
      __typename ... on ConversationUnavailableError { reason } } }`);
    expect(sent).toEqual({
      data: { sendMessage: { __typename: 'ConversationUnavailableError', reason: 'NOT_FOUND' } },
    });
    // The owner still has it, running.
    expect((await gql(gateway, GET, { id })).data?.conversation).toMatchObject({
      conversationId: id,
      status: 'RUNNING',
    });
  });

  it('sends a message over REST and pages the history both ways with the events’ cursors', async () => {
    const { gateway } = await start();
    const id = await create(gateway);
    await until(gateway, id, 'RUNNING');
    const sent = await gql(gateway, SEND, { input: { conversationId: id, content: 'ping' } });
    expect(sent).toEqual({ data: { sendMessage: { __typename: 'SendMessagePayload', delivery: 'REST' } } });
    await expect
      .poll(async () => (await history(gateway, id)).edges.map((edge) => edge.node.content).filter(Boolean), {
        timeout: 5_000,
        interval: 20,
      })
      .toEqual(['ping', 'You said: ping']);
    const all = await history(gateway, id);
    const count = all.edges.length;
    expect(count).toBeGreaterThanOrEqual(2);
    // Forward one at a time from each end cursor gives the same events in the same order.
    const forward: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < count + 1; i++) {
      const page = await history(gateway, id, { first: 1, after });
      forward.push(...page.edges.map((edge) => edge.cursor));
      expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor as string;
    }
    expect(forward).toEqual(all.edges.map((edge) => edge.cursor));
    // Backward: the newest two, then the two before them.
    const newest = await history(gateway, id, { last: 2 });
    expect(newest.edges.map((edge) => edge.cursor)).toEqual(forward.slice(-2));
    expect(newest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: count > 2 });
    const before = await history(gateway, id, { last: 2, before: newest.pageInfo.startCursor });
    expect(before.edges.map((edge) => edge.cursor)).toEqual(forward.slice(-4, -2));
    expect(before.pageInfo.hasNextPage).toBe(true);
  });
});
