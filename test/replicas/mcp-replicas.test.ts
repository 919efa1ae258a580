/**
 * The MCP endpoint (`/mcp`) through two gateway processes (the CLI) sharing one real redis-server,
 * behind real HAProxy running deploy/haproxy.cfg, in front of the real local service, once per
 * upstream API. `/mcp` keeps no session, so each POST of a client may land on either replica: an SDK
 * v2 client speaking 2026-07-28 and an SDK v1 client speaking 2025-11-25 (whose `initialize` is served
 * by one replica and its later calls by both) list the tools, start a conversation, page the list with
 * the cursor passed back, message the agent and wait for its turn, with every tool call counted on the
 * replica that ran it (`graphql_operations_total` on each replica's own /metrics).
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { APIS } from '../helpers/both-apis.ts';
import { seedConversation } from '../helpers/both-apis-live.ts';
import { startTestLocalService, type TestLocalService } from '../helpers/local-service.ts';
import type { ToolResult } from '../helpers/mcp.ts';
import {
  replicaTools,
  type SpawnedGateway,
  spawnGateway,
  startHaproxy,
  stopChild,
  TestRedis,
  tempDir,
} from '../helpers/replicas.ts';

const tools = replicaTools();

/** One caller per protocol era, so that each lists only its own conversations. */
const ERAS = [
  ['2026-07-28', 'mcp-replicas-modern'],
  ['2025-11-25', 'mcp-replicas-legacy'],
] as const;

interface Waited {
  outcome: string;
  agentState: string | null;
  cursor: string;
  events: Array<{ type: string; source: string | null; text: string | null; cursor: string }>;
}

type Page = {
  edges: Array<{ node: { conversationId: string } }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
};

/** A client of one era through `url`, closed when the test finishes. */
async function connect(era: (typeof ERAS)[number][0], url: URL, key: string) {
  const requestInit = { headers: { 'X-Session-API-Key': key } };
  if (era === '2026-07-28') {
    const client = new ClientV2(
      { name: 'mcp-replicas', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new TransportV2(url, { requestInit }));
    onTestFinished(() => client.close());
    expect(client.getNegotiatedProtocolVersion()).toBe(era);
    return {
      listTools: async () => (await client.listTools()).tools.map((tool) => tool.name),
      call: async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args })) as ToolResult,
    };
  }
  const client = new ClientV1({ name: 'mcp-replicas', version: '1' });
  const transport = new TransportV1(url, { requestInit });
  await client.connect(transport);
  onTestFinished(() => client.close());
  expect(transport.protocolVersion).toBe(era);
  // Stateless: no session id was issued, so nothing ties the later POSTs to the replica of `initialize`.
  expect(transport.sessionId).toBeUndefined();
  return {
    listTools: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as ToolResult,
  };
}

/** GraphQL operations a replica has run so far (every outcome and type), from its own /metrics. */
async function operationsRun(gateway: SpawnedGateway): Promise<number> {
  const text = await (await fetch(gateway.url.replace(/\/graphql$/, '/metrics'))).text();
  let total = 0;
  for (const [, count] of text.matchAll(/^graphql_operations_total\{[^}]*\} (\d+)$/gm))
    total += Number(count);
  return total;
}

describe.skipIf('missing' in tools).each(APIS)('MCP through two replicas behind HAProxy, on %s', (api) => {
  const { redisServer, haproxy } = tools as { redisServer: string; haproxy: string };
  let service: TestLocalService;
  let redis: TestRedis;
  let replicas: [SpawnedGateway, SpawnedGateway];
  let lb: Awaited<ReturnType<typeof startHaproxy>>;
  const dataDir = tempDir('mcp-replicas-');

  beforeAll(async () => {
    service = await startTestLocalService({ api, sessionApiKeys: ERAS.map(([, key]) => key) });
    redis = await TestRedis.start(redisServer);
    const env = {
      UPSTREAM_URL: service.url,
      UPSTREAM_API: api,
      REDIS_URL: redis.url,
      DATA_DIR: dataDir.path,
      REDIS_REPLICAS_HINT: '2',
    };
    replicas = (await Promise.all([spawnGateway(env), spawnGateway(env)])) as [
      SpawnedGateway,
      SpawnedGateway,
    ];
    // Each replica's first /ready is slow (a cold start): answered here, before HAProxy's health checks,
    // which give up on an answer slower than their 500 ms interval and then take the replica out of the
    // pool, cutting the requests it is serving (`on-marked-down shutdown-sessions`: a 502).
    for (const replica of replicas) {
      await vi.waitFor(
        async () => expect((await fetch(replica.url.replace(/\/graphql$/, '/ready'))).status).toBe(200),
        { timeout: 10_000, interval: 20 },
      );
    }
    lb = await startHaproxy(haproxy, [replicas[0].address, replicas[1].address]);
    // Both replicas in HAProxy's pool: operations through it are run on each.
    await vi.waitFor(
      async () => {
        const answer = await fetch(lb.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ __typename }' }),
        });
        expect(answer.status).toBe(200);
        expect(Math.min(...(await Promise.all(replicas.map(operationsRun))))).toBeGreaterThanOrEqual(2);
      },
      { timeout: 10_000, interval: 50 },
    );
  }, 60_000);

  afterAll(async () => {
    for (const child of [lb?.child, ...(replicas ?? []).map((replica) => replica.child)])
      if (child) await stopChild(child);
    await redis?.close();
    await service?.close();
    dataDir.remove();
  });

  it.each(ERAS)(
    'a %s client drives a conversation through HAProxy, its tool calls served by both replicas',
    async (era, key) => {
      const mcp = await connect(era, new URL('/mcp', lb.url), key);
      /** Which replica ran each tool call (its operation counted on that replica's /metrics). */
      const servedBy: number[] = [];
      const call = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
        const before = await Promise.all(replicas.map(operationsRun));
        const result = await mcp.call(name, args);
        // A subscription (wait_for_agent) is counted when its stream has closed, just after the answer.
        await vi.waitFor(
          async () => {
            const after = await Promise.all(replicas.map(operationsRun));
            const grew = after.map((count, index) => count - (before[index] as number));
            expect(grew.toSorted()).toEqual([0, 1]);
            servedBy.push(grew.indexOf(1));
          },
          { timeout: 5_000, interval: 20 },
        );
        return result;
      };

      expect(await mcp.listTools()).toEqual([
        'list_conversations',
        'get_conversation',
        'start_conversation',
        'send_message',
        'read_events',
        'change_agent_state',
        'stop_conversation',
        'workspace_changes',
        'workspace_diff',
        'read_file',
        'wait_for_agent',
      ]);

      const older = await seedConversation(api, service.url, { key });
      const started = await call('start_conversation', { initialUserMessage: 'hello through HAProxy' });
      expect(started.isError).toBeFalsy();
      const { createConversation } = started.structuredContent as {
        createConversation: { conversationId: string };
      };
      // From the payload: `conversation` is null while a V1 sandbox is still starting (a slow machine).
      const id = createConversation.conversationId;

      // Newest first, one a page: the started one, then (with the cursor passed back) the seeded one.
      let first: Page | undefined;
      await vi.waitFor(
        async () => {
          // V1 lists a conversation once its start task has made it.
          const page = await call('list_conversations', { first: 1 });
          first = page.structuredContent?.conversations as Page;
          expect(first.edges.map((edge) => edge.node.conversationId)).toEqual([id]);
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(first?.pageInfo.hasNextPage).toBe(true);
      const second = await call('list_conversations', { first: 1, after: first?.pageInfo.endCursor });
      expect(second.isError).toBeFalsy();
      expect(second.structuredContent?.conversations).toMatchObject({
        edges: [{ node: { conversationId: older } }],
        pageInfo: { hasNextPage: false },
      });

      // The first turn: from the first stored event until the agent has answered the first message.
      let start = '';
      await vi.waitFor(
        async () => {
          const read = await call('read_events', { id, first: 1 });
          const page = read.structuredContent?.conversation as {
            events: { edges: Array<{ node: { cursor: string } }> };
          } | null;
          start = page?.events.edges[0]?.node.cursor ?? '';
          expect(start).not.toBe('');
        },
        { timeout: 10_000, interval: 50 },
      );
      const firstTurn = await call('wait_for_agent', {
        conversationId: id,
        after: start,
        timeoutSeconds: 20,
      });
      expect(firstTurn.structuredContent).toMatchObject({ outcome: 'TURN_OVER' });
      const cursor = (firstTurn.structuredContent as unknown as Waited).cursor;

      // docs/mcp.md's pattern: the cursor before the message, the message, then the wait from that cursor.
      const sent = await call('send_message', { conversationId: id, content: 'and again' });
      expect(sent.structuredContent?.sendMessage).toMatchObject({ __typename: 'SendMessagePayload' });
      const waited = await call('wait_for_agent', { conversationId: id, after: cursor, timeoutSeconds: 20 });
      expect(waited.isError).toBeFalsy();
      const turn = waited.structuredContent as unknown as Waited;
      expect(turn).toMatchObject({
        outcome: 'TURN_OVER',
        agentState: api === 'v0' ? 'AWAITING_USER_INPUT' : 'FINISHED',
      });
      expect(turn.events[0]).toMatchObject({ type: 'UserMessageEvent', text: 'and again' });
      expect(turn.events.some((event) => event.text === 'You said: and again')).toBe(true);

      // What the wait saw is stored: read from the same cursor, maybe on the other replica.
      const read = await call('read_events', { id, after: cursor, first: 50 });
      const { conversation } = read.structuredContent as {
        conversation: { events: { edges: Array<{ node: { cursor: string; message: string | null } }> } };
      };
      const stored = conversation.events.edges.map((edge) => edge.node);
      expect(stored[0]?.message).toBe('and again');
      expect(stored.at(-1)?.cursor).toBe(turn.cursor);

      // Every tool call ran once, on one replica, and both replicas ran some.
      expect(new Set(servedBy)).toEqual(new Set([0, 1]));
    },
    60_000,
  );
});
