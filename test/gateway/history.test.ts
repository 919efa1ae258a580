/**
 * `Conversation.events` paging and the lifecycle mutations (delete, rename, start, stop), through the
 * real gateway over HTTP against the real local service (seeded through its own store).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenantResolver } from '../../src/local-service/auth.ts';
import { newStoredConversation } from '../../src/local-service/new-conversation.ts';
import { openConversationStore } from '../../src/local-service/store.ts';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { newConversationId, seededEvent } from '../helpers/fixtures.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  createConversation,
  makeTempDataDir,
  rest,
  startTestLocalService,
  type TestLocalService,
} from '../helpers/local-service.ts';

const KEY_A = 'key-a';

/** The V0 event cursor of an id, as docs/live-events.md documents the token (a kept one must stay readable). */
const cursorOf = (eventId: number) => Buffer.from(JSON.stringify([1, 'v0', eventId])).toString('base64url');
const KEY_B = 'key-b';

const EVENTS = /* GraphQL */ `
  query Events($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      events(first: $first, after: $after, last: $last, before: $before) {
        edges {
          cursor
          node {
            __typename
            eventId
            source
            ... on UserMessageEvent { content }
            ... on AgentStateChangedEvent { agentState }
          }
        }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`;

type Edge = { cursor: string; node: { __typename: string; eventId: number; content?: string } };
type Page = {
  edges: Edge[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
};

let service: TestLocalService;
let gateway: TestGateway;
const c0 = newConversationId();
const c100 = newConversationId();
const c101 = newConversationId();
const c1000 = newConversationId();

async function post(query: string, variables: Record<string, unknown>, key = KEY_A) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': key },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as {
    data?: Record<string, Record<string, unknown> | null> | null;
    errors?: Array<{ message: string; extensions?: { code?: string } }>;
  };
}

async function page(id: string, args: Record<string, unknown>, key = KEY_A): Promise<Page> {
  const result = await post(EVENTS, { id, ...args }, key);
  expect(result.errors).toBeUndefined();
  return (result.data?.conversation as { events: Page } | undefined)?.events as Page;
}

const idsOf = (p: Page) => p.edges.map((edge) => edge.node.eventId);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

beforeAll(async () => {
  const dataDir = makeTempDataDir();
  const store = openConversationStore(dataDir);
  const tenantA = createTenantResolver([KEY_A, KEY_B])(KEY_A) ?? '';
  for (const [id, count] of [
    [c0, 0],
    [c100, 100],
    [c101, 101],
    [c1000, 1000],
  ] as const) {
    store.insertConversation(newStoredConversation(tenantA, id));
    for (let i = 0; i < count; i++) store.appendEvent(tenantA, id, seededEvent(i));
  }
  store.close();
  service = await startTestLocalService({ dataDir, sessionApiKeys: [KEY_A, KEY_B] });
  // Many operations from one key in a few seconds: the per-credential rate limit is not under test here.
  gateway = await startTestGateway({ upstreamUrl: service.url, hardening: { rateLimit: false } });
});

afterAll(async () => {
  await gateway?.close();
  await service?.close();
});

describe('Conversation.events', () => {
  it('pages 1,000 events forward with first: 100 and exact pageInfo on every page', async () => {
    const seen: number[] = [];
    let after: string | null = null;
    for (let n = 0; n < 10; n++) {
      const p: Page = await page(c1000, { first: 100, after });
      expect(p.edges).toHaveLength(100);
      expect(p.pageInfo.hasPreviousPage).toBe(n > 0);
      expect(p.pageInfo.hasNextPage).toBe(n < 9);
      expect(p.pageInfo.startCursor).toBe(p.edges[0]?.cursor);
      seen.push(...idsOf(p));
      after = p.pageInfo.endCursor;
    }
    expect(seen).toEqual(range(0, 1000));
    const beyond = await page(c1000, { first: 100, after });
    expect(beyond).toEqual({
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
    });
  });

  it('pages 1,000 events backward from the newest with last: 100, each page in chronological order', async () => {
    const pages: number[][] = [];
    let before: string | null = null;
    for (let n = 0; n < 10; n++) {
      const p: Page = await page(c1000, { last: 100, before });
      const ids = idsOf(p);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(p.pageInfo.hasNextPage).toBe(n > 0);
      expect(p.pageInfo.hasPreviousPage).toBe(n < 9);
      pages.unshift(ids);
      before = p.pageInfo.startCursor;
    }
    expect(pages.flat()).toEqual(range(0, 1000));
  });

  it('last: 50 is the newest 50 in one upstream read; events are typed like the subscription', async () => {
    const calls = gateway.countCalls('GET', `/api/conversations/${c1000}/events`);
    const p = await page(c1000, { last: 50 });
    expect(gateway.countCalls('GET', `/api/conversations/${c1000}/events`) - calls).toBe(1);
    expect(idsOf(p)).toEqual(range(950, 1000));
    expect(p.pageInfo).toEqual({
      hasNextPage: false,
      hasPreviousPage: true,
      startCursor: cursorOf(950),
      endCursor: cursorOf(999),
    });
    expect(p.edges[0]?.node).toEqual({
      __typename: 'UserMessageEvent',
      eventId: 950,
      source: 'USER',
      content: 'm950',
    });
    expect(p.edges[4]?.node).toEqual({
      __typename: 'AgentStateChangedEvent',
      eventId: 954,
      source: 'ENVIRONMENT',
      agentState: 'AWAITING_USER_INPUT',
    });
  });

  it('resumes from middle cursors in both directions; decimal ids (the cursors before tokens) still read', async () => {
    expect(idsOf(await page(c1000, { first: 3, after: cursorOf(499) }))).toEqual([500, 501, 502]);
    expect(idsOf(await page(c1000, { first: 3, after: '499' }))).toEqual([500, 501, 502]);
    const back = await page(c1000, { last: 3, before: cursorOf(500) });
    expect(idsOf(back)).toEqual([497, 498, 499]);
    expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    // A cursor of an edge in the middle of a page resumes right after that edge.
    const first = await page(c1000, { first: 10 });
    const middle = first.edges[4]?.cursor;
    expect(idsOf(await page(c1000, { first: 2, after: middle }))).toEqual([5, 6]);
  });

  it('page-size edges: 0 events, exactly 100, 101', async () => {
    const empty = {
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
    };
    expect(await page(c0, { first: 100 })).toEqual(empty);
    expect(await page(c0, { last: 50 })).toEqual(empty);
    expect(await page(c0, {})).toEqual(empty);

    const exact = await page(c100, { first: 100 });
    expect(idsOf(exact)).toEqual(range(0, 100));
    expect(exact.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    const exactBack = await page(c100, { last: 100 });
    expect(idsOf(exactBack)).toEqual(range(0, 100));
    expect(exactBack.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });

    const over = await page(c101, { first: 100 });
    expect(idsOf(over)).toEqual(range(0, 100));
    expect(over.pageInfo).toMatchObject({
      hasNextPage: true,
      hasPreviousPage: false,
      endCursor: cursorOf(99),
    });
    const rest = await page(c101, { first: 100, after: cursorOf(99) });
    expect(idsOf(rest)).toEqual([100]);
    expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const overBack = await page(c101, { last: 100 });
    expect(idsOf(overBack)).toEqual(range(1, 101));
    expect(overBack.pageInfo).toMatchObject({
      hasNextPage: false,
      hasPreviousPage: true,
      startCursor: cursorOf(1),
    });
    const oldest = await page(c101, { last: 100, before: cursorOf(1) });
    expect(idsOf(oldest)).toEqual([0]);
    expect(oldest.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
  });

  it('defaults to the first 20; a cursor past the end or at the start still gives exact pageInfo', async () => {
    expect(idsOf(await page(c1000, {}))).toEqual(range(0, 20));
    expect(await page(c1000, { first: 5, after: '5000' })).toMatchObject({
      edges: [],
      pageInfo: { hasNextPage: false, hasPreviousPage: true },
    });
    expect(await page(c1000, { last: 5, before: '0' })).toMatchObject({
      edges: [],
      pageInfo: { hasNextPage: true, hasPreviousPage: false },
    });
  });

  it('refuses bad arguments with BAD_USER_INPUT and calls nothing upstream', async () => {
    const before = gateway.countCalls('GET', `/api/conversations/${c1000}/events`);
    // Page sizes outside 1..100 are refused for the whole operation before it runs (operation-cost.ts).
    for (const args of [{ first: 0 }, { first: 101 }, { last: 101 }]) {
      const result = await post(EVENTS, { id: c1000, ...args });
      expect(result.errors?.[0]?.extensions?.code, JSON.stringify(args)).toBe('BAD_USER_INPUT');
      expect(result.data).toBeUndefined();
    }
    for (const args of [
      { first: 5, last: 5 },
      { first: 5, before: '3' },
      { after: 'abc' },
      { before: '-1' },
    ]) {
      const result = await post(EVENTS, { id: c1000, ...args });
      expect(result.errors?.[0]?.extensions?.code, JSON.stringify(args)).toBe('BAD_USER_INPUT');
      expect(result.data?.conversation).toEqual({ events: null });
    }
    expect(gateway.countCalls('GET', `/api/conversations/${c1000}/events`)).toBe(before);
  });

  it("another tenant cannot reach a conversation's events (its lookups answer null)", async () => {
    const result = await post(EVENTS, { id: c1000, last: 5 }, KEY_B);
    expect(result).toEqual({ data: { conversation: null } });
    const node = await post(
      `query($id: ID!) { node(id: $id) { ... on Conversation { events(last: 5) { edges { cursor } } } } }`,
      { id: encodeGlobalId('Conversation', c1000) },
      KEY_B,
    );
    expect(node).toEqual({ data: { node: null } });
  });
});

// --- Mutations ---------------------------------------------------------------------------------------

const RENAME = /* GraphQL */ `
  mutation Rename($input: RenameConversationInput!) {
    renameConversation(input: $input) {
      __typename
      ... on RenameConversationPayload { conversation { id conversationId title } }
      ... on ConversationNotFoundError { message conversationId }
      ... on PermissionDeniedError { message conversationId msgId }
      ... on UpstreamValidationError { message issues { loc type } }
    }
  }
`;
const START = /* GraphQL */ `
  mutation Start($input: StartConversationInput!) {
    startConversation(input: $input) {
      __typename
      ... on StartConversationPayload { conversation { conversationId status } }
      ... on ConversationNotFoundError { conversationId }
      ... on UpstreamValidationError { issues { loc type } }
    }
  }
`;
const STOP = /* GraphQL */ `
  mutation Stop($input: StopConversationInput!) {
    stopConversation(input: $input) {
      __typename
      ... on StopConversationPayload { wasRunning conversation { conversationId status runtimeStatus } }
      ... on ConversationNotFoundError { conversationId }
    }
  }
`;
const DELETE = /* GraphQL */ `
  mutation Delete($input: DeleteConversationInput!) {
    deleteConversation(input: $input) {
      __typename
      ... on DeleteConversationPayload { deletedId conversationId }
      ... on ConversationNotFoundError { conversationId }
    }
  }
`;

async function upstreamRecord(id: string, key = KEY_A) {
  return (
    await rest<{ title: string; status: string } | null>(service.url, `/api/conversations/${id}`, { key })
  ).body;
}

describe('lifecycle mutations', () => {
  it('renameConversation: payload, validation, not found, permission denied, bad id', async () => {
    const id = await createConversation(service.url, {}, KEY_A);
    const renamed = await post(RENAME, {
      input: { conversationId: encodeGlobalId('Conversation', id), title: '  Hello  ' },
    });
    expect(renamed).toEqual({
      data: {
        renameConversation: {
          __typename: 'RenameConversationPayload',
          conversation: { id: encodeGlobalId('Conversation', id), conversationId: id, title: 'Hello' },
        },
      },
    });

    const blank = await post(RENAME, { input: { conversationId: id, title: '   ' } });
    expect(blank.data?.renameConversation).toMatchObject({
      __typename: 'UpstreamValidationError',
      issues: [{ loc: ['body', 'title'] }],
    });
    const long = await post(RENAME, { input: { conversationId: id, title: 'x'.repeat(201) } });
    expect(long.data?.renameConversation).toMatchObject({ __typename: 'UpstreamValidationError' });
    expect((await upstreamRecord(id))?.title).toBe('Hello');

    const unknown = newConversationId();
    expect(
      (await post(RENAME, { input: { conversationId: unknown, title: 'x' } })).data?.renameConversation,
    ).toEqual({
      __typename: 'ConversationNotFoundError',
      message: 'No conversation with this id.',
      conversationId: unknown,
    });
    const denied = await post(RENAME, { input: { conversationId: id, title: 'mine now' } }, KEY_B);
    expect(denied.data?.renameConversation).toEqual({
      __typename: 'PermissionDeniedError',
      message: 'You can only change your own conversations.',
      conversationId: id,
      msgId: 'AUTHORIZATION$PERMISSION_DENIED',
    });
    expect((await upstreamRecord(id))?.title).toBe('Hello');

    const bad = await post(RENAME, { input: { conversationId: 'not an id!', title: 'x' } });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('startConversation and stopConversation: payloads, not found, tenant isolation', async () => {
    const id = await createConversation(service.url, {}, KEY_A);
    await rest(service.url, `/api/conversations/${id}/stop`, { method: 'POST', key: KEY_A });
    expect((await upstreamRecord(id))?.status).toBe('STOPPED');

    // Another tenant can neither start nor stop it, and learns nothing but "not found".
    expect((await post(START, { input: { conversationId: id } }, KEY_B)).data?.startConversation).toEqual({
      __typename: 'ConversationNotFoundError',
      conversationId: id,
    });
    expect((await upstreamRecord(id))?.status).toBe('STOPPED');

    const started = await post(START, { input: { conversationId: id, providers: ['GITHUB'] } });
    expect(started.data?.startConversation).toMatchObject({
      __typename: 'StartConversationPayload',
      conversation: { conversationId: id },
    });
    expect(['STARTING', 'RUNNING']).toContain(
      (started.data?.startConversation as { conversation?: { status: string } } | undefined)?.conversation
        ?.status,
    );
    const unknownProvider = await post(START, { input: { conversationId: id, providers: ['UNKNOWN'] } });
    expect(unknownProvider.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    expect((await post(STOP, { input: { conversationId: id } }, KEY_B)).data?.stopConversation).toEqual({
      __typename: 'ConversationNotFoundError',
      conversationId: id,
    });
    expect((await upstreamRecord(id))?.status).not.toBe('STOPPED');

    const stopped = await post(STOP, { input: { conversationId: id } });
    expect(stopped.data?.stopConversation).toEqual({
      __typename: 'StopConversationPayload',
      wasRunning: true,
      conversation: { conversationId: id, status: 'STOPPED', runtimeStatus: null },
    });
    const again = await post(STOP, { input: { conversationId: id } });
    expect(again.data?.stopConversation).toMatchObject({ wasRunning: false });

    const unknown = newConversationId();
    expect((await post(START, { input: { conversationId: unknown } })).data?.startConversation).toEqual({
      __typename: 'ConversationNotFoundError',
      conversationId: unknown,
    });
    expect((await post(STOP, { input: { conversationId: unknown } })).data?.stopConversation).toEqual({
      __typename: 'ConversationNotFoundError',
      conversationId: unknown,
    });
  });

  it('deleteConversation: the conversation vanishes from lookups, search and events; errors for unknown and foreign ids', async () => {
    const id = await createConversation(service.url, {}, KEY_A);
    const keep = await createConversation(service.url, {}, KEY_A);
    // Another tenant's delete is "not found" and deletes nothing.
    expect((await post(DELETE, { input: { conversationId: id } }, KEY_B)).data?.deleteConversation).toEqual({
      __typename: 'ConversationNotFoundError',
      conversationId: id,
    });
    expect(await upstreamRecord(id)).not.toBeNull();

    const deleted = await post(DELETE, { input: { conversationId: encodeGlobalId('Conversation', id) } });
    expect(deleted).toEqual({
      data: {
        deleteConversation: {
          __typename: 'DeleteConversationPayload',
          deletedId: encodeGlobalId('Conversation', id),
          conversationId: id,
        },
      },
    });
    expect(await upstreamRecord(id)).toBeNull();
    const lookups = await post(
      `query($id: ID!, $gid: ID!) {
        conversation(id: $id) { id }
        node(id: $gid) { id }
        nodes(ids: [$gid]) { id }
        conversations(first: 100) { edges { node { conversationId } } }
      }`,
      { id, gid: encodeGlobalId('Conversation', id) },
    );
    expect(lookups.errors).toBeUndefined();
    expect(lookups.data?.conversation).toBeNull();
    expect(lookups.data?.node).toBeNull();
    expect(lookups.data?.nodes).toEqual([null]);
    const list = lookups.data?.conversations as
      | { edges: Array<{ node: { conversationId: string } }> }
      | undefined;
    const listed = (list?.edges ?? []).map((edge) => edge.node.conversationId);
    expect(listed).not.toContain(id);
    expect(listed).toContain(keep);
    expect((await rest(service.url, `/api/conversations/${id}/events`, { key: KEY_A })).status).toBe(404);

    expect((await post(DELETE, { input: { conversationId: id } })).data?.deleteConversation).toEqual({
      __typename: 'ConversationNotFoundError',
      conversationId: id,
    });
    const bad = await post(DELETE, { input: { conversationId: encodeGlobalId('Nope', 'x') } });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
