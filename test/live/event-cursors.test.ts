/**
 * Event cursors (`ConversationEvent.cursor`, `conversationEvents(after:)`, the history connection's
 * edge cursors), end to end against the real local service: resuming over graphql-ws and SSE across
 * the catch-up/live seam while the agent produces events, a history edge cursor continued live, a
 * live cursor paging the history, the place of id-less events, the deprecated `afterEventId`, and
 * the refusal of malformed, foreign and ambiguous starts.
 */
import type { ExecutionResult } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { userMessage } from '../helpers/fixtures.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { createConversation, localServiceForTest, rest, storedEvents } from '../helpers/local-service.ts';
import { subscribeOverSse } from '../helpers/sse.ts';

/** The V0 token of an id, as docs/live-events.md documents it (a kept one must stay readable). */
const cursorOf = (eventId: number) => Buffer.from(JSON.stringify([1, 'v0', eventId])).toString('base64url');
const seal = (payload: unknown[]) => Buffer.from(JSON.stringify(payload)).toString('base64url');

const EVENTS = /* GraphQL */ `
  subscription Events($id: ID!, $after: String, $fromBeginning: Boolean, $afterEventId: Int) {
    conversationEvents(conversationId: $id, after: $after, fromBeginning: $fromBeginning, afterEventId: $afterEventId) {
      __typename eventId cursor ... on UserMessageEvent { content }
    }
  }
`;

const HISTORY = /* GraphQL */ `
  query History($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      events(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { eventId cursor } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`;

type Event = { __typename: string; eventId: number | null; cursor: string; content?: string };
type Result = ExecutionResult<{ conversationEvents: Event }>;
type History = {
  edges: Array<{ cursor: string; node: { eventId: number; cursor: string } }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
};

async function graphql(url: string, query: string, variables: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as ExecutionResult<Record<string, unknown>>;
}

async function history(url: string, variables: Record<string, unknown>): Promise<History> {
  const result = await graphql(url, HISTORY, variables);
  expect(result.errors).toBeUndefined();
  const conversation = result.data?.conversation as { events: History } | undefined;
  if (!conversation) throw new Error(`no conversation: ${JSON.stringify(result)}`);
  return conversation.events;
}

const storedIds = async (url: string, id: string) => (await storedEvents(url, id)).map((event) => event.id);
const postMessage = (url: string, id: string, content: string) =>
  rest(url, `/api/conversations/${id}/events`, { method: 'POST', body: userMessage(content) });
const eventsOf = (items: Result[]) =>
  items.map((item) => item.data?.conversationEvents).filter((event): event is Event => event != null);
const idsOf = (items: Result[]) =>
  eventsOf(items)
    .map((event) => event.eventId)
    .filter((eventId): eventId is number => eventId !== null);

/**
 * Every item's cursor: a stored event's is its own id's; an id-less one's is the stored event before
 * it in the stream (or the start position when none came yet).
 */
function expectCursorsInPlace(items: Result[], start: number): void {
  let previous = start;
  for (const event of eventsOf(items)) {
    if (event.eventId !== null) previous = event.eventId;
    expect(event.cursor, JSON.stringify(event)).toBe(cursorOf(previous));
  }
}

/** Resolves once the agent has stopped storing events (it waits for input). */
async function quiet(url: string, id: string): Promise<number[]> {
  let stored: number[] = [];
  await vi.waitFor(
    async () => {
      const before = await storedIds(url, id);
      await new Promise((resolve) => setTimeout(resolve, 150));
      stored = await storedIds(url, id);
      expect(stored).toEqual(before);
    },
    { timeout: 5000, interval: 20 },
  );
  return stored;
}

/** Keeps the agent busy (a command per message) until stopped. */
function produce(url: string, id: string, prefix: string) {
  let producing = true;
  const done = (async () => {
    for (let n = 0; producing && n < 150; n++) {
      await postMessage(url, id, `run: echo ${prefix}${n}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return async () => {
    producing = false;
    await done;
  };
}

describe('resuming with after', () => {
  it('a history edge cursor continues live over graphql-ws, then a live cursor resumes over SSE, each across the catch-up/live seam with nothing lost or repeated', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);
    const stopFirst = produce(upstream.url, id, 'a');
    await vi.waitFor(
      async () => expect((await storedIds(upstream.url, id)).length).toBeGreaterThanOrEqual(30),
      {
        timeout: 5000,
        interval: 20,
      },
    );

    // The transcript's first page, then live from its end cursor while the agent keeps producing.
    const page = await history(gw.url, { id, first: 10 });
    const pageIds = page.edges.map((edge) => edge.node.eventId);
    const lastRead = pageIds[pageIds.length - 1] as number;
    expect(page.edges.map((edge) => edge.cursor)).toEqual(pageIds.map(cursorOf));
    expect(page.edges.map((edge) => edge.node.cursor)).toEqual(pageIds.map(cursorOf));
    expect(page.pageInfo.endCursor).toBe(cursorOf(lastRead));
    const ws = subscribeOverWs<Result>(wsClient(gw.url), {
      query: EVENTS,
      variables: { id, after: page.pageInfo.endCursor },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await stopFirst();
    await postMessage(upstream.url, id, 'first-end');
    let stored = await storedIds(upstream.url, id);
    const firstEnd = stored[stored.length - 1] as number;
    await ws.until((items) => idsOf(items).includes(firstEnd), 10_000);
    expect(ws.items.every((item) => item.errors === undefined)).toBe(true);
    expect(idsOf(ws.items)).toEqual(
      stored.filter((eventId) => eventId > lastRead).slice(0, idsOf(ws.items).length),
    );
    expectCursorsInPlace(ws.items, lastRead);

    // A cursor from the middle of that live stream resumes over SSE while the agent produces again.
    const wsEvents = eventsOf(ws.items).filter((event) => event.eventId !== null);
    const cut = wsEvents[Math.floor(wsEvents.length / 2)] as Event;
    const stopSecond = produce(upstream.url, id, 'b');
    const sse = subscribeOverSse<Result>(gw.url, { query: EVENTS, variables: { id, after: cut.cursor } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await stopSecond();
    await postMessage(upstream.url, id, 'second-end');
    stored = await storedIds(upstream.url, id);
    const secondEnd = stored[stored.length - 1] as number;
    await sse.until((items) => idsOf(items).includes(secondEnd), 10_000);
    expect(sse.items.every((item) => item.errors === undefined)).toBe(true);
    expect(idsOf(sse.items)).toEqual(stored.filter((eventId) => eventId > (cut.eventId as number)));
    expectCursorsInPlace(sse.items, cut.eventId as number);
    // The graphql-ws stream stayed live through all of it: exactly the stored events after its start.
    await ws.until((items) => idsOf(items).includes(secondEnd), 10_000);
    expect(idsOf(ws.items)).toEqual(stored.filter((eventId) => eventId > lastRead));
  });

  it('fromBeginning gives the whole history; a live cursor pages the history both ways; afterEventId (deprecated) still resumes like after', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);
    for (let n = 0; n < 6; n++) await postMessage(upstream.url, id, `hello ${n}`);
    await vi.waitFor(
      async () => expect((await storedIds(upstream.url, id)).length).toBeGreaterThanOrEqual(12),
      {
        timeout: 5000,
        interval: 20,
      },
    );
    const stored = await storedIds(upstream.url, id);
    const live = subscribeOverWs<Result>(wsClient(gw.url), {
      query: EVENTS,
      variables: { id, after: cursorOf(-1) },
    });
    await live.until((items) => idsOf(items).length >= stored.length);
    expect(idsOf(live.items)).toEqual(stored);
    const middle = eventsOf(live.items).find((event) => event.eventId === stored[5]) as Event;

    const forward = await history(gw.url, { id, first: 3, after: middle.cursor });
    expect(forward.edges.map((edge) => edge.node.eventId)).toEqual(stored.slice(6, 9));
    expect(forward.pageInfo).toEqual({
      hasNextPage: true,
      hasPreviousPage: true,
      startCursor: cursorOf(stored[6] as number),
      endCursor: cursorOf(stored[8] as number),
    });
    const backward = await history(gw.url, { id, last: 2, before: middle.cursor });
    expect(backward.edges.map((edge) => edge.node.eventId)).toEqual(stored.slice(3, 5));
    expect(backward.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });

    const byId = subscribeOverSse<Result>(gw.url, {
      query: EVENTS,
      variables: { id, afterEventId: middle.eventId },
    });
    const byCursor = subscribeOverSse<Result>(gw.url, {
      query: EVENTS,
      variables: { id, after: middle.cursor },
    });
    // The agent may still be answering: compare what both streams hold up to the snapshot.
    const rest = stored.slice(6);
    const last = rest.at(-1) as number;
    await byId.until((items) => idsOf(items).includes(last));
    await byCursor.until((items) => idsOf(items).includes(last));
    const upToLast = (items: Result[]) => items.slice(0, idsOf(items).indexOf(last) + 1);
    expect(upToLast(byId.items)).toEqual(upToLast(byCursor.items));
    expect(idsOf(upToLast(byId.items))).toEqual(rest);
  });

  it('an id-less event carries the cursor of the stored event it follows, and resuming from it gives what came next', async () => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);
    await vi.waitFor(
      async () => expect((await storedIds(upstream.url, id)).length).toBeGreaterThanOrEqual(2),
      {
        timeout: 5000,
        interval: 20,
      },
    );
    // Quiet: the agent waits for input, so the newest stored id stays the newest.
    const newest = (await quiet(upstream.url, id)).at(-1) as number;
    const live = subscribeOverWs<Result>(wsClient(gw.url), { query: EVENTS, variables: { id } });
    await vi.waitFor(() => expect(gw.gateway.liveStats().subscribers).toBe(1), { timeout: 5000 });
    // The shared socket is open: what the upstream sends now reaches the live subscriber.
    await vi.waitFor(() => expect(gw.gateway.liveStats().openSockets).toBe(1), {
      timeout: 5000,
    });
    const renamed = await graphql(
      gw.url,
      'mutation ($input: RenameConversationInput!) { renameConversation(input: $input) { __typename } }',
      { input: { conversationId: id, title: 'Cursor test' } },
    );
    expect(renamed).toEqual({ data: { renameConversation: { __typename: 'RenameConversationPayload' } } });
    await live.until((items) => eventsOf(items).some((event) => event.__typename === 'TitleChangedEvent'));
    const title = eventsOf(live.items).find((event) => event.__typename === 'TitleChangedEvent') as Event;
    expect(title).toEqual({ __typename: 'TitleChangedEvent', eventId: null, cursor: cursorOf(newest) });

    const resumed = subscribeOverWs<Result>(wsClient(gw.url), {
      query: EVENTS,
      variables: { id, after: title.cursor },
    });
    await postMessage(upstream.url, id, 'after the title');
    await resumed.until((items) => idsOf(items).length > 0);
    expect(eventsOf(resumed.items)[0]).toEqual({
      __typename: 'UserMessageEvent',
      eventId: newest + 1,
      cursor: cursorOf(newest + 1),
      content: 'after the title',
    });
  });
});

describe('refused starts', () => {
  const FOREIGN = seal([1, 'v1', '5e0d7c3b-2a19-4f6e-8d4c-3b2a1f0e9d8c', '2026-08-21T18:01:02.123456']);
  const refusals: Array<[string, string, string]> = [
    ['garbage', 'abc!', 'after: not an event cursor (pass a `cursor` value exactly as the gateway gave it).'],
    [
      'base64url of no JSON',
      'bm90IGpzb24',
      'after: not an event cursor (pass a `cursor` value exactly as the gateway gave it).',
    ],
    [
      'an unknown version',
      seal([2, 'v0', 3]),
      'after: an event cursor of version 2, which this gateway does not read.',
    ],
    [
      "another API's",
      FOREIGN,
      'after: an event cursor of the V1 API, but this upstream speaks V0: cursors resume only against the API that issued them. Read the history again for fresh cursors.',
    ],
    [
      'an impossible id',
      seal([1, 'v0', -2]),
      'after: not an event cursor of this upstream (its position names no event).',
    ],
  ];

  it.each(refusals)(
    '%s is BAD_USER_INPUT on graphql-ws, SSE and the history connection',
    async (_label, token, message) => {
      const upstream = await localServiceForTest();
      const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
      const id = await createConversation(upstream.url);
      // One read first, so a gateway that finds out which API answers knows before any cursor arrives.
      await history(gw.url, { id, first: 1 });
      const expected = {
        errors: [
          {
            message,
            locations: [{ line: 3, column: 5 }],
            path: ['conversationEvents'],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      };
      const ws = subscribeOverWs<Result>(wsClient(gw.url), {
        query: EVENTS,
        variables: { id, after: token },
      });
      await ws.finished();
      expect(ws.items).toEqual([expected]);
      const sse = subscribeOverSse<Result>(gw.url, { query: EVENTS, variables: { id, after: token } });
      await sse.finished();
      expect(sse.items).toEqual([expected]);
      expect(gw.gateway.liveStats()).toMatchObject({ subscribers: 0 });

      const paged = await graphql(gw.url, HISTORY, { id, first: 5, after: token });
      expect(paged).toEqual({
        data: { conversation: { events: null } },
        errors: [
          {
            message,
            path: ['conversation', 'events'],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      });
      const back = await graphql(gw.url, HISTORY, { id, last: 5, before: token });
      expect(back.errors?.[0]?.message).toBe(message.replace(/^after:/, 'before:'));
    },
  );

  it.each([
    ['after and afterEventId', { after: cursorOf(0), afterEventId: 0 }, 'after and afterEventId'],
    ['after and fromBeginning', { after: cursorOf(0), fromBeginning: true }, 'after and fromBeginning'],
    [
      'fromBeginning and afterEventId',
      { fromBeginning: true, afterEventId: -1 },
      'fromBeginning and afterEventId',
    ],
  ])('%s together are BAD_USER_INPUT, and nothing attaches', async (_label, starts, named) => {
    const upstream = await localServiceForTest();
    const gw = await gatewayForTest({ upstreamUrl: upstream.url, fastLive: true });
    const id = await createConversation(upstream.url);
    const expected = [
      {
        errors: [
          {
            message: `Pass one of after (a cursor), fromBeginning or the deprecated afterEventId, not ${named}.`,
            locations: [{ line: 3, column: 5 }],
            path: ['conversationEvents'],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      },
    ];
    const variables = { id, ...starts };
    const ws = subscribeOverWs<Result>(wsClient(gw.url), { query: EVENTS, variables });
    await ws.finished();
    expect(ws.items).toEqual(expected);
    const sse = subscribeOverSse<Result>(gw.url, { query: EVENTS, variables });
    await sse.finished();
    expect(sse.items).toEqual(expected);
    expect(gw.gateway.liveStats()).toMatchObject({ subscribers: 0, upstreamSockets: 0 });
  });
});
