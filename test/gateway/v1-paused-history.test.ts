/**
 * One order for a V1 conversation's history, whichever source answers it: while the sandbox runs the
 * gateway reads the agent server's log (append order); while it is paused, the app server's copies,
 * which the upstream sorts by file name (`<YYYYMMDDHHMMSS>_<Kind>_<hex id>`: within one second by kind,
 * not by when the events happened). Against the real bundled service speaking V1 (whose copies keep
 * that file-name order) and the real gateway: the paused history is the running one event for event,
 * pages of 1, 2, 3 and 7 that split a second's events page exactly in both directions, and cursors
 * minted on one source resume on the other. Then against a scripted app server that pages its copies
 * as the app server's code does and the bundled service does not (a `page_id` starts the page after
 * its file, while `next_page_id` names the next page's first file).
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { seedConversations } from '../helpers/both-apis.ts';
import { gatewayForTest, serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { startHostileUpstream } from '../helpers/hostile-upstream.ts';
import { rest } from '../helpers/local-service.ts';
import { gql, type Json, send, statusOf, V1_KEY } from '../helpers/v1-graph.ts';

const KEY = V1_KEY;

const EVENTS = /* GraphQL */ `
  query Events($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      events(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { __typename cursor raw } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`;

type Raw = { id: string; timestamp: string; kind: string };
type Edge = { cursor: string; node: { __typename: string; cursor: string; raw: Raw } };
type Page = {
  edges: Edge[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
};

async function page(gateway: TestGateway, id: string, args: Json): Promise<Page> {
  const answer = await gql(gateway, EVENTS, { id, ...args });
  expect(answer.errors).toBeUndefined();
  return ((answer.data?.conversation ?? {}) as { events: Page }).events;
}

/** The whole history in one read (it holds fewer than 100 events). */
async function whole(gateway: TestGateway, id: string): Promise<Edge[]> {
  const all = await page(gateway, id, { first: 100 });
  expect(all.pageInfo.hasNextPage).toBe(false);
  return all.edges;
}

/** The second an event's naive timestamp falls in (what the copies' file names keep of it). */
const secondOf = (edge: Edge) => edge.node.raw.timestamp.slice(0, 19);

/** The app server's own order of the copies: the file names, sorted. */
const fileName = (raw: Raw) =>
  `${raw.timestamp.slice(0, 19).replace(/[-T:]/g, '')}_${raw.kind}_${raw.id.replaceAll('-', '')}`;

/** Whether a boundary between two pages falls between two events of one second. */
function splitsASecond(all: Edge[], boundaries: number[]): boolean {
  return boundaries.some(
    (at) => at > 0 && at < all.length && secondOf(all[at - 1] as Edge) === secondOf(all[at] as Edge),
  );
}

/** Pages through the history with `size`, forward then backward, checking every page exactly. */
async function pageBothWays(gateway: TestGateway, id: string, all: Edge[], size: number): Promise<void> {
  const forward: number[] = [];
  for (let start = 0, after: string | null = null; start < all.length; start += size) {
    const p: Page = await page(gateway, id, { first: size, after });
    const end = Math.min(start + size, all.length);
    expect(p.edges, `first: ${size} after event ${start - 1}`).toEqual(all.slice(start, end));
    expect(p.pageInfo).toEqual({
      hasNextPage: end < all.length,
      hasPreviousPage: start > 0,
      startCursor: all[start]?.cursor,
      endCursor: all[end - 1]?.cursor,
    });
    forward.push(end);
    after = p.pageInfo.endCursor;
  }
  const backward: number[] = [];
  for (let end = all.length, before: string | null = null; end > 0; end -= size) {
    const p: Page = await page(gateway, id, { last: size, before });
    const start = Math.max(0, end - size);
    expect(p.edges, `last: ${size} before event ${end}`).toEqual(all.slice(start, end));
    expect(p.pageInfo).toEqual({
      hasNextPage: end < all.length,
      hasPreviousPage: start > 0,
      startCursor: all[start]?.cursor,
      endCursor: all[end - 1]?.cursor,
    });
    backward.push(start);
    before = p.pageInfo.startCursor;
  }
  // The sizes are worth testing only if their pages cut through a second's events.
  expect(splitsASecond(all, forward) && splitsASecond(all, backward), `size ${size} splits a second`).toBe(
    true,
  );
}

/** Resumes from every event's cursor (as `reference` gives them) on the current source, both ways. */
async function resumeFromEach(
  gateway: TestGateway,
  id: string,
  all: Edge[],
  reference: string[],
): Promise<void> {
  for (const [i, cursor] of reference.entries()) {
    const after = await page(gateway, id, { first: 3, after: cursor });
    expect(after.edges, `first: 3 after event ${i}`).toEqual(all.slice(i + 1, i + 4));
    expect(after.pageInfo.hasNextPage).toBe(i + 4 < all.length);
    const before = await page(gateway, id, { last: 3, before: cursor });
    expect(before.edges, `last: 3 before event ${i}`).toEqual(all.slice(Math.max(0, i - 3), i));
    expect(before.pageInfo.hasPreviousPage).toBe(i - 3 > 0);
  }
}

describe("V1: history reads in the log's order whether the sandbox runs or is paused", () => {
  it('the paused history (app server copies) equals the running one (agent server log), pages exactly, and cursors cross sources', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api: 'v1',
      service: { sessionApiKeys: [KEY] },
      hardening: { rateLimit: false },
    });
    const [id] = (await seedConversations('v1', service.url, 1, KEY)) as [string];
    // Each message: the user's MessageEvent, then (microseconds later, the same second as a rule) the
    // ConversationStateUpdateEvent it causes, which the copies' file names sort first; then the answer.
    const messages = ['run: echo one', 'think: two', 'three', 'edit: four.txt', 'finish: five'];
    for (const [n, message] of messages.entries()) {
      await send(gateway, id, message);
      await expect
        .poll(
          async () =>
            (await whole(gateway, id)).filter(
              (edge) =>
                edge.node.raw.kind === 'ConversationStateUpdateEvent' &&
                (edge.node.raw as Json).value === 'finished',
            ).length,
          { timeout: 5_000, interval: 20 },
        )
        .toBe(n + 1);
    }
    expect(await statusOf(gateway, id)).toBe('RUNNING');
    gateway.calls.length = 0;
    const running = await whole(gateway, id);
    expect(gateway.countCalls('GET', `/api/v1/conversation/${id}/events/search`)).toBe(0);
    expect(running.length).toBeGreaterThan(20);
    for (const edge of running) expect(edge.node.cursor).toBe(edge.cursor);

    // What makes this test worth running: the copies' own order is not the log's.
    const copies = await rest<{ items: Raw[]; next_page_id: string | null }>(
      service.url,
      `/api/v1/conversation/${id}/events/search?limit=100`,
      { key: KEY },
    );
    expect(copies.status).toBe(200);
    expect(copies.body.items.map(fileName)).toEqual(copies.body.items.map(fileName).sort());
    const logOrder = running.map((edge) => edge.node.raw.id);
    expect(copies.body.items.map((raw) => raw.id)).not.toEqual(logOrder);
    expect([...copies.body.items.map((raw) => raw.id)].sort()).toEqual([...logOrder].sort());

    // Paused: the app server's copies answer, event for event the running history.
    const stop = await gql(
      gateway,
      `mutation($id: ID!) { stopConversation(input: { conversationId: $id }) { __typename } }`,
      { id },
    );
    expect(stop.data?.stopConversation).toEqual({ __typename: 'StopConversationPayload' });
    expect(await statusOf(gateway, id)).toBe('STOPPED');
    gateway.calls.length = 0;
    const paused = await whole(gateway, id);
    expect(gateway.countCalls('GET', `/api/v1/conversation/${id}/events/search`)).toBeGreaterThan(0);
    expect(paused).toEqual(running);

    for (const size of [1, 2, 3, 7]) await pageBothWays(gateway, id, paused, size);
    // Cursors minted while the sandbox ran resume exactly while it is paused.
    await resumeFromEach(
      gateway,
      id,
      paused,
      running.map((edge) => edge.cursor),
    );

    // Running again: the log answers, starting with the same events, and cursors the copies gave resume.
    const start = await gql(
      gateway,
      `mutation($id: ID!) { startConversation(input: { conversationId: $id }) { __typename } }`,
      { id },
    );
    expect(start.data?.startConversation).toEqual({ __typename: 'StartConversationPayload' });
    await expect.poll(() => statusOf(gateway, id), { timeout: 5_000, interval: 20 }).toBe('RUNNING');
    gateway.calls.length = 0;
    const again = await whole(gateway, id);
    expect(gateway.countCalls('GET', `/api/v1/conversation/${id}/events/search`)).toBe(0);
    expect(again.slice(0, paused.length)).toEqual(paused);
    for (const size of [1, 2, 3, 7]) await pageBothWays(gateway, id, again, size);
    await resumeFromEach(
      gateway,
      id,
      again,
      paused.map((edge) => edge.cursor),
    );
  }, 60_000);
});

describe('V1: copies paged as the app server pages them', () => {
  it("reads every copy once in the log's order, though a page id starts after its file", async () => {
    const hex = '4d1c0b9ee5f34c6a9d2b7f1e8a0c3b21';
    // The log: 8 events in one second, 6 in the next, kinds taking turns so that the file names sort
    // each second otherwise; one at a whole second (Python prints no `.000000`).
    const kinds = ['MessageEvent', 'ConversationStateUpdateEvent', 'ActionEvent', 'ObservationEvent'];
    const log: Raw[] = Array.from({ length: 14 }, (_, i) => {
      const second = i < 8 ? '01' : '02';
      const fraction = i === 8 ? '' : `.${String(100_000 + i * 37_000).padStart(6, '0')}`;
      return {
        id: `00000000-0000-4000-8000-${String(900 - i * 7).padStart(12, '0')}`,
        timestamp: `2025-11-28T10:00:${second}${fraction}`,
        source: 'environment',
        kind: kinds[i % kinds.length] as string,
      } as Raw;
    });
    const app = await startHostileUpstream();
    onTestFinished(() => app.close());
    app.on('GET', '/api/v1/app-conversations', {
      json: [
        {
          id: hex,
          sandbox_id: 'oh-agent-server-5kQ2w9XcVbN3mR7tY1uZ8e',
          title: 'Paused',
          trigger: 'gui',
          pr_number: [],
          sub_conversation_ids: [],
          created_at: '2025-11-28T10:00:00.123456Z',
          updated_at: '2025-11-28T10:00:05.000001Z',
          sandbox_status: 'PAUSED',
          execution_status: null,
          conversation_url: null,
          session_api_key: null,
        },
      ],
    });
    // The app server's search_events (openhands/app_server/event/filesystem_event_service.py).
    app.on('GET', `/api/v1/conversation/${hex}/events/search`, ({ query }) => {
      const digits = (value: string | null) => value?.slice(0, 19).replace(/[-T:]/g, '') ?? null;
      const gte = digits(query.get('timestamp__gte'));
      const lt = digits(query.get('timestamp__lt'));
      const files = log
        .map((raw) => [fileName(raw), raw] as const)
        .filter(
          ([name]) => (gte === null || name.slice(0, 14) >= gte) && (lt === null || name.slice(0, 14) < lt),
        )
        .sort(([a], [b]) => (a < b ? -1 : 1));
      if (query.get('sort_order') === 'TIMESTAMP_DESC') files.reverse();
      const at = files.findIndex(([name]) => name === query.get('page_id'));
      const start = at < 0 ? 0 : at + 1;
      const limit = Number(query.get('limit') ?? 100);
      return {
        json: {
          items: files.slice(start, start + limit).map(([, raw]) => raw),
          next_page_id: files[start + limit]?.[0] ?? null,
        },
      };
    });
    const gateway = await gatewayForTest({
      upstreamUrl: app.url,
      upstreamApi: 'v1',
      hardening: { rateLimit: false },
    });

    const all = await whole(gateway, hex);
    expect(all.map((edge) => edge.node.raw.id)).toEqual(log.map((raw) => raw.id));
    for (const size of [1, 2, 3, 7]) await pageBothWays(gateway, hex, all, size);
    await resumeFromEach(
      gateway,
      hex,
      all,
      all.map((edge) => edge.cursor),
    );
  });
});
