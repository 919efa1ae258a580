/**
 * `Conversation.events` paging and the lifecycle mutations (delete, rename, start, stop), through the
 * real gateway over HTTP against the real local service, on both OpenHands APIs: one test body per
 * behaviour (the events are seeded in each API's own tables, test/helpers/both-apis-history.ts).
 * Events are told apart by content and order (`eventId` is V0's only); where the APIs differ on
 * purpose (docs/upstream-apis.md), the expectation names the API. What only V0 has (integer event ids,
 * the decimal cursors from before cursors were tokens) is under "V0 only".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { APIS, seedConversations } from '../helpers/both-apis.ts';
import {
  createUpstreamConversation,
  labelOf,
  seededLabels,
  seedHistories,
  stoppedStatus,
  stopUpstream,
  upstreamConversation,
  upstreamEventCount,
} from '../helpers/both-apis-history.ts';
import { newConversationId } from '../helpers/fixtures.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { makeTempDataDir, startTestLocalService, type TestLocalService } from '../helpers/local-service.ts';

const KEY_A = 'key-a';
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
            ... on AgentStateChangedEvent { agentState agentStateRaw }
          }
        }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`;

type Edge = {
  cursor: string;
  node: { __typename: string; eventId: number | null; content?: string };
};
type Page = {
  edges: Edge[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
};

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

/** The V0 event cursor of an id, as docs/live-events.md documents the token (a kept one must stay readable). */
const v0CursorOf = (eventId: number) => Buffer.from(JSON.stringify([1, 'v0', eventId])).toString('base64url');

describe.each(APIS)('history and lifecycle on the %s API', (api) => {
  let service: TestLocalService;
  let gateway: TestGateway;
  const c0 = newConversationId();
  const c100 = newConversationId();
  const c101 = newConversationId();
  const c1000 = newConversationId();

  beforeAll(async () => {
    const dataDir = makeTempDataDir();
    const seeded = seedHistories(api, dataDir, [KEY_A, KEY_B], KEY_A, {
      [c0]: 0,
      [c100]: 100,
      [c101]: 101,
      [c1000]: 1000,
    });
    service = await startTestLocalService({ api, dataDir, sessionApiKeys: [KEY_A, KEY_B] });
    await seeded.ready(service.url);
    // Many operations from one key in a few seconds: the per-credential rate limit is not under test here.
    gateway = await startTestGateway({
      upstreamUrl: service.url,
      upstreamApi: api,
      hardening: { rateLimit: false },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await service?.close();
  });

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

  const labelsOf = (p: Page) => p.edges.map((edge) => labelOf(edge.node));

  const cursors = new Map<string, string[]>();
  /** The cursor of seeded event `i`, as the history gives it out (read forward once per conversation). */
  async function cursorAt(id: string, i: number): Promise<string> {
    let all = cursors.get(id);
    if (!all) {
      all = [];
      for (let after: string | null = null; ; ) {
        const p: Page = await page(id, { first: 100, after });
        all.push(...p.edges.map((edge) => edge.cursor));
        if (!p.pageInfo.hasNextPage) break;
        after = p.pageInfo.endCursor;
      }
      cursors.set(id, all);
    }
    const cursor = all[i];
    if (cursor === undefined) throw new Error(`no event ${i} in ${id}`);
    return cursor;
  }

  async function upstreamRecord(id: string) {
    return upstreamConversation(api, service.url, id, KEY_A);
  }

  describe('Conversation.events', () => {
    it('pages 1,000 events forward with first: 100 and exact pageInfo on every page', async () => {
      const seen: string[] = [];
      const seenCursors = new Set<string>();
      let after: string | null = null;
      for (let n = 0; n < 10; n++) {
        const p: Page = await page(c1000, { first: 100, after });
        expect(p.edges).toHaveLength(100);
        expect(p.pageInfo.hasPreviousPage).toBe(n > 0);
        expect(p.pageInfo.hasNextPage).toBe(n < 9);
        expect(p.pageInfo.startCursor).toBe(p.edges[0]?.cursor);
        expect(p.pageInfo.endCursor).toBe(p.edges[99]?.cursor);
        seen.push(...labelsOf(p));
        for (const edge of p.edges) seenCursors.add(edge.cursor);
        after = p.pageInfo.endCursor;
      }
      expect(seen).toEqual(seededLabels(0, 1000));
      expect(seenCursors.size).toBe(1000);
      const beyond = await page(c1000, { first: 100, after });
      expect(beyond).toEqual({
        edges: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
      });
    });

    it('pages 1,000 events backward from the newest with last: 100, each page in chronological order', async () => {
      const pages: string[][] = [];
      let before: string | null = null;
      for (let n = 0; n < 10; n++) {
        const p: Page = await page(c1000, { last: 100, before });
        expect(labelsOf(p)).toEqual(seededLabels(900 - 100 * n, 1000 - 100 * n));
        expect(p.pageInfo.hasNextPage).toBe(n > 0);
        expect(p.pageInfo.hasPreviousPage).toBe(n < 9);
        pages.unshift(labelsOf(p));
        before = p.pageInfo.startCursor;
      }
      expect(pages.flat()).toEqual(seededLabels(0, 1000));
    });

    it('last: 50 is the newest 50 in one upstream read; events are typed like the subscription', async () => {
      const eventsPath = `/api/conversations/${c1000}/events`;
      const calls = gateway.countCalls('GET', eventsPath);
      const p = await page(c1000, { last: 50 });
      // V0: the events route; V1: the agent server's events search (same path prefix).
      expect(gateway.countCalls('GET', eventsPath) - calls).toBe(1);
      expect(labelsOf(p)).toEqual(seededLabels(950, 1000));
      expect(p.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: true,
        startCursor: await cursorAt(c1000, 950),
        endCursor: await cursorAt(c1000, 999),
      });
      // eventId is V0's integer id; V1's ids are strings, so it is null there (docs/live-events.md).
      expect(p.edges[0]?.node).toEqual({
        __typename: 'UserMessageEvent',
        eventId: api === 'v0' ? 950 : null,
        source: 'USER',
        content: 'm950',
      });
      // The raw state is the upstream's own word: V0's agent state, V1's execution status, which the
      // graph maps onto the same agent state (docs/upstream-apis.md, "Events").
      expect(p.edges[4]?.node).toEqual({
        __typename: 'AgentStateChangedEvent',
        eventId: api === 'v0' ? 954 : null,
        source: 'ENVIRONMENT',
        agentState: 'AWAITING_USER_INPUT',
        agentStateRaw: api === 'v0' ? 'awaiting_user_input' : 'idle',
      });
    });

    it('resumes from middle cursors in both directions', async () => {
      expect(labelsOf(await page(c1000, { first: 3, after: await cursorAt(c1000, 499) }))).toEqual(
        seededLabels(500, 503),
      );
      const back = await page(c1000, { last: 3, before: await cursorAt(c1000, 500) });
      expect(labelsOf(back)).toEqual(seededLabels(497, 500));
      expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
      // A cursor of an edge in the middle of a page resumes right after that edge.
      const first = await page(c1000, { first: 10 });
      const middle = first.edges[4]?.cursor;
      expect(labelsOf(await page(c1000, { first: 2, after: middle }))).toEqual(seededLabels(5, 7));
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
      expect(labelsOf(exact)).toEqual(seededLabels(0, 100));
      expect(exact.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
      const exactBack = await page(c100, { last: 100 });
      expect(labelsOf(exactBack)).toEqual(seededLabels(0, 100));
      expect(exactBack.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });

      const over = await page(c101, { first: 100 });
      expect(labelsOf(over)).toEqual(seededLabels(0, 100));
      expect(over.pageInfo).toMatchObject({
        hasNextPage: true,
        hasPreviousPage: false,
        endCursor: await cursorAt(c101, 99),
      });
      const rest = await page(c101, { first: 100, after: await cursorAt(c101, 99) });
      expect(labelsOf(rest)).toEqual(seededLabels(100, 101));
      expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      const overBack = await page(c101, { last: 100 });
      expect(labelsOf(overBack)).toEqual(seededLabels(1, 101));
      expect(overBack.pageInfo).toMatchObject({
        hasNextPage: false,
        hasPreviousPage: true,
        startCursor: await cursorAt(c101, 1),
      });
      const oldest = await page(c101, { last: 100, before: await cursorAt(c101, 1) });
      expect(labelsOf(oldest)).toEqual(seededLabels(0, 1));
      expect(oldest.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    });

    it('defaults to the first 20; a cursor at the end or at the start still gives exact pageInfo', async () => {
      expect(labelsOf(await page(c1000, {}))).toEqual(seededLabels(0, 20));
      expect(await page(c1000, { first: 5, after: await cursorAt(c1000, 999) })).toEqual({
        edges: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
      });
      expect(await page(c1000, { last: 5, before: await cursorAt(c1000, 0) })).toEqual({
        edges: [],
        pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null },
      });
    });

    it('refuses bad arguments with BAD_USER_INPUT and calls nothing upstream', async () => {
      const eventsPath = `/api/conversations/${c1000}/events`;
      const validCursor = await cursorAt(c1000, 3);
      const before = gateway.countCalls('GET', eventsPath);
      // Page sizes outside 1..100 are refused for the whole operation before it runs (operation-cost.ts).
      for (const args of [{ first: 0 }, { first: 101 }, { last: 101 }]) {
        const result = await post(EVENTS, { id: c1000, ...args });
        expect(result.errors?.[0]?.extensions?.code, JSON.stringify(args)).toBe('BAD_USER_INPUT');
        expect(result.data).toBeUndefined();
      }
      // A cursor the other API issued: "cursors resume only against the API that issued them".
      const otherApi = Buffer.from(JSON.stringify([1, api === 'v0' ? 'v1' : 'v0', 3])).toString('base64url');
      for (const args of [
        { first: 5, last: 5 },
        { first: 5, before: validCursor },
        { after: 'abc' },
        { before: '-1' },
        { after: otherApi },
      ]) {
        const result = await post(EVENTS, { id: c1000, ...args });
        expect(result.errors?.[0]?.extensions?.code, JSON.stringify(args)).toBe('BAD_USER_INPUT');
        expect(result.data?.conversation).toEqual({ events: null });
      }
      expect(gateway.countCalls('GET', eventsPath)).toBe(before);
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

  if (api === 'v0') {
    describe('V0 only: integer event ids and the cursors minted from them', () => {
      it('cursors are the documented V0 tokens and decimal ids (the cursors before tokens) still read', async () => {
        const newest = await page(c1000, { last: 50 });
        expect(newest.edges.map((edge) => edge.node.eventId)).toEqual(
          Array.from({ length: 50 }, (_, i) => 950 + i),
        );
        expect(newest.pageInfo).toMatchObject({ startCursor: v0CursorOf(950), endCursor: v0CursorOf(999) });
        expect(labelsOf(await page(c1000, { first: 3, after: v0CursorOf(499) }))).toEqual(
          seededLabels(500, 503),
        );
        expect(labelsOf(await page(c1000, { first: 3, after: '499' }))).toEqual(seededLabels(500, 503));
        expect(labelsOf(await page(c1000, { last: 3, before: '500' }))).toEqual(seededLabels(497, 500));
        expect(await page(c1000, { first: 5, after: '5000' })).toMatchObject({
          edges: [],
          pageInfo: { hasNextPage: false, hasPreviousPage: true },
        });
        expect(await page(c1000, { last: 5, before: '0' })).toMatchObject({
          edges: [],
          pageInfo: { hasNextPage: true, hasPreviousPage: false },
        });
      });
    });
  }

  describe('lifecycle mutations', () => {
    it('renameConversation: payload, validation, not found, another tenant, bad id', async () => {
      const id = await createUpstreamConversation(api, service.url, KEY_A);
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
      expect((await upstreamRecord(id))?.title).toBe('Hello');

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
      // V0's rename answered 403 for another user's conversation; every V1 route answers 404 there
      // (docs/upstream-apis.md, "Another user's conversation").
      expect(denied.data?.renameConversation).toEqual(
        api === 'v0'
          ? {
              __typename: 'PermissionDeniedError',
              message: 'You can only change your own conversations.',
              conversationId: id,
              msgId: 'AUTHORIZATION$PERMISSION_DENIED',
            }
          : {
              __typename: 'ConversationNotFoundError',
              message: 'No conversation with this id.',
              conversationId: id,
            },
      );
      expect((await upstreamRecord(id))?.title).toBe('Hello');

      const bad = await post(RENAME, { input: { conversationId: 'not an id!', title: 'x' } });
      expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    });

    it('startConversation and stopConversation: payloads, not found, tenant isolation, what else they stop', async () => {
      // Two conversations created together (V1: in one sandbox).
      const [id, sibling] = (await seedConversations(api, service.url, 2, KEY_A)) as [string, string];
      await stopUpstream(api, service.url, id, KEY_A);
      expect((await upstreamRecord(id))?.status).toBe(stoppedStatus(api));

      // Another tenant can neither start nor stop it, and learns nothing but "not found".
      expect((await post(START, { input: { conversationId: id } }, KEY_B)).data?.startConversation).toEqual({
        __typename: 'ConversationNotFoundError',
        conversationId: id,
      });
      expect((await upstreamRecord(id))?.status).toBe(stoppedStatus(api));

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
      expect((await upstreamRecord(id))?.status).not.toBe(stoppedStatus(api));

      const stopped = await post(STOP, { input: { conversationId: id } });
      expect(stopped.data?.stopConversation).toEqual({
        __typename: 'StopConversationPayload',
        wasRunning: true,
        conversation: { conversationId: id, status: 'STOPPED', runtimeStatus: null },
      });
      // V0 stops one conversation's agent; V1 pauses the whole sandbox, every conversation in it
      // (docs/upstream-apis.md, "Start and stop act on the whole sandbox").
      const siblingStatus = (await upstreamRecord(sibling))?.status;
      if (api === 'v0') expect(siblingStatus).not.toBe('STOPPED');
      else expect(siblingStatus).toBe('PAUSED');
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
      const [id, keep] = (await seedConversations(api, service.url, 2, KEY_A)) as [string, string];
      // Another tenant's delete is "not found" and deletes nothing.
      expect((await post(DELETE, { input: { conversationId: id } }, KEY_B)).data?.deleteConversation).toEqual(
        {
          __typename: 'ConversationNotFoundError',
          conversationId: id,
        },
      );
      expect(await upstreamRecord(id)).not.toBeNull();
      expect(await upstreamEventCount(api, service.url, id, KEY_A)).toBeGreaterThan(0);

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
      // Its events are gone: V0's events route answers 404; V1's event copies (scoped by the caller's
      // conversations) answer an empty history for an id the caller no longer has.
      expect(await upstreamEventCount(api, service.url, id, KEY_A)).toBe(api === 'v0' ? null : 0);

      expect((await post(DELETE, { input: { conversationId: id } })).data?.deleteConversation).toEqual({
        __typename: 'ConversationNotFoundError',
        conversationId: id,
      });
      const bad = await post(DELETE, { input: { conversationId: encodeGlobalId('Nope', 'x') } });
      expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    });
  });
});
