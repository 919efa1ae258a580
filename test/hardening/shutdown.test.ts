/**
 * Graceful shutdown, on both OpenHands APIs (describe.each(APIS)): RunningGateway.close() drains
 * in-flight queries (held by V0's server, V1's app server, or a V1 agent server) and refuses new ones,
 * bounds the drain, ends graphql-ws and SSE subscriptions with a
 * last GATEWAY_SHUTTING_DOWN result and closes the upstream sockets (V0's Socket.IO bridge, V1's agent
 * server sockets: liveStats()); the process on SIGTERM does the same and its embedded local service
 * (speaking the same API) keeps the data. Streams subscribe by cursor (`fromBeginning`), which both
 * APIs take (`afterEventId` is V0's, docs/live-events.md).
 */
import { resolve } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { APIS, type Api } from '../helpers/both-apis.ts';
import { emptyPage, runningAppConversation } from '../helpers/both-apis-hardening.ts';
import { cursorSubscription, seedConversation } from '../helpers/both-apis-live.ts';
import { Collector } from '../helpers/collector.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { startHostileUpstream } from '../helpers/hostile-upstream.ts';
import { post } from '../helpers/http.ts';
import {
  localServiceForTest,
  rest,
  startTestLocalService,
  tempDataDirForTest,
} from '../helpers/local-service.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';
import { killAfterTest, spawnTypeScript } from '../helpers/processes.ts';
import { sseSubscribe } from '../helpers/sse.ts';

const LIST = 'query List { conversations(first: 2) { edges { node { id } } } }';
/** Every event from the first (with `fromBeginning: true`), or live events only (without). */
const EVENTS = cursorSubscription('__typename cursor');

type Result = { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> };

/**
 * Which server holds the in-flight answer: the one the gateway lists from (V0's server, V1's app
 * server), or a V1 agent server behind an app server that answers (V1 reads history from a second
 * server, with a client of its own the drain must wait for too).
 */
interface Holding {
  api: Api;
  server: 'upstream' | 'agent server';
}
const HOLDING: Holding[] = [
  ...APIS.map((api) => ({ api, server: 'upstream' as const })),
  { api: 'v1', server: 'agent server' },
];
const CONVERSATION_ID = '4d1c0b9ee5f34c6a9d2b7f1e8a0c3b21';

describe.each(HOLDING)(
  'RunningGateway.close() with a $server on $api holding an answer',
  ({ api, server }) => {
    it('lets an in-flight query finish, refuses new requests, then closes', async () => {
      const held: Array<() => void> = [];
      // The holding server answers its empty list (V0, V1) or an agent server's empty events page.
      const empty = server === 'upstream' ? emptyPage(api) : { items: [], next_page_id: null };
      const holding = await misbehavingUpstreamForTest((_req, res) =>
        held.push(() => sendJson(res, 200, empty)),
      );
      let upstreamUrl = holding.url;
      let request: { query: string; variables?: Record<string, unknown> } = { query: LIST };
      let expected: unknown = { conversations: { edges: [] } };
      if (server === 'agent server') {
        const app = await startHostileUpstream();
        onTestFinished(() => app.close());
        app.on('GET', '/api/v1/app-conversations', {
          json: [runningAppConversation(CONVERSATION_ID, holding.url, 'sandbox-key-shutdown-Qw8Er7Ty6')],
        });
        upstreamUrl = app.url;
        request = {
          query:
            'query History($id: ID!) { conversation(id: $id) { events(first: 2) { edges { cursor } } } }',
          variables: { id: CONVERSATION_ID },
        };
        expected = { conversation: { events: { edges: [] } } };
      }
      const gateway = await gatewayForTest({ upstreamUrl, upstreamApi: api });
      const inFlight = post(gateway.url, request);
      await vi.waitFor(() => expect(held.length).toBe(1), { timeout: 5000, interval: 20 });

      let closed = false;
      const closing = gateway.close().then(() => {
        closed = true;
      });
      // New connections are no longer accepted (or, on a kept-alive one, answered 503).
      const refused = await post(gateway.url, { query: LIST }).then(
        (answer) => answer.status,
        () => 'refused',
      );
      expect([503, 'refused']).toContain(refused);
      await new Promise((done) => setTimeout(done, 50));
      expect(closed).toBe(false); // still draining: the query is in flight

      held.shift()?.();
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({ data: expected });
      await closing;
      expect(gateway.logs().some((line) => line.includes('"drained":true'))).toBe(true);
    });
  },
);

describe.each(APIS)('RunningGateway.close() on the %s API', (api) => {
  it('bounds the drain: after the grace period what is left is cut and close() resolves', async () => {
    const upstream = await misbehavingUpstreamForTest(() => {}); // never answers
    const { startGateway } = await import('../../src/gateway/server.ts');
    const { createLogger } = await import('../../src/gateway/observability/logging.ts');
    const running = await startGateway({
      upstreamUrl: upstream.url,
      upstreamApi: api,
      port: 0,
      shutdownGraceMs: 100,
      logger: createLogger({ level: 'silent' }),
    });
    onTestFinished(() => running.close());
    const inFlight = post(running.url, { query: LIST }).then(
      (answer) => answer.status,
      () => 'cut',
    );
    await vi.waitFor(() => expect(upstream.requests.length).toBe(1), { timeout: 5000, interval: 20 });
    await running.close();
    expect(await inFlight).toBe('cut');
  });

  it('ends graphql-ws and SSE subscriptions with a last GATEWAY_SHUTTING_DOWN result, then completes them', async () => {
    const service = await localServiceForTest({ api });
    const id = await seedConversation(api, service.url, { message: 'hello' });
    const gateway = await gatewayForTest({ upstreamUrl: service.url, upstreamApi: api, fastLive: true });
    const ws = wsClient(gateway.url);
    const fromBeginning = { query: EVENTS, variables: { id, fromBeginning: true } };
    const overWs = new Collector<Result>(ws.iterate(fromBeginning) as AsyncIterable<Result>);
    const abort = new AbortController();
    onTestFinished(() => abort.abort());
    const overSse = new Collector<Result>(
      sseSubscribe(gateway.url, fromBeginning, {}, abort.signal) as AsyncIterable<Result>,
    );
    // Live events only: over graphql-ws, a live group's member (live-fan-out.ts).
    const live = new Collector<Result>(
      ws.iterate({ query: EVENTS, variables: { id } }) as AsyncIterable<Result>,
    );
    await overWs.until((items) => items.length > 0);
    await overSse.until((items) => items.length > 0);
    await vi.waitFor(() => expect(gateway.gateway.hardening.shutdown.streams).toBe(3), {
      timeout: 5000,
      interval: 20,
    });
    expect(gateway.gateway.liveStats().upstreamSockets).toBeGreaterThan(0);

    await gateway.close();
    await overWs.finished();
    await overSse.finished();
    await live.finished();
    expect(live.error).toBeNull();
    for (const stream of [overWs, overSse, live]) {
      expect(stream.items.at(-1)?.errors?.[0]?.extensions?.code).toBe('GATEWAY_SHUTTING_DOWN');
      expect(stream.items.slice(0, -1).every((item) => item.errors === undefined)).toBe(true);
    }
    // The same last result whichever path delivered it (an envelop stream or a live group).
    expect(live.items.at(-1)).toEqual(overWs.items.at(-1));
    expect(overSse.items.at(-1)).toEqual(overWs.items.at(-1));
    expect(overSse.error).toBeNull(); // the SSE stream completed, it was not cut
    expect(gateway.gateway.liveStats().upstreamSockets).toBe(0);
  });

  it('refuses operations that arrive on an open graphql-ws connection while draining', async () => {
    const held: Array<() => void> = [];
    const upstream = await misbehavingUpstreamForTest((_req, res) =>
      held.push(() => sendJson(res, 200, emptyPage(api))),
    );
    const gateway = await gatewayForTest({ upstreamUrl: upstream.url, upstreamApi: api });
    const ws = wsClient(gateway.url);
    // A query in flight over the socket keeps both the socket open and the gateway draining.
    const inFlight = new Collector(ws.iterate({ query: LIST }));
    await vi.waitFor(() => expect(held.length).toBe(1), { timeout: 5000, interval: 20 });
    const closing = gateway.close();
    const during = new Collector(ws.iterate({ query: '{ __typename }' }));
    await during.finished();
    expect(during.items).toEqual([
      {
        errors: [
          expect.objectContaining({ extensions: expect.objectContaining({ code: 'GATEWAY_SHUTTING_DOWN' }) }),
        ],
      },
    ]);
    held.shift()?.();
    await inFlight.finished();
    expect(inFlight.items).toEqual([{ data: { conversations: { edges: [] } } }]);
    await closing;
  });
});

describe.each(APIS)('the process on SIGTERM, its embedded service on the %s API', (api) => {
  const ROOT = resolve(import.meta.dirname, '../..');
  /** The conversation's id as the service reads it from its store (V1: the app server's batch get). */
  const storedId = async (api: Api, url: string, id: string): Promise<string | undefined> => {
    if (api === 'v0') {
      const found = await rest<{ conversation_id: string }>(url, `/api/conversations/${id}`);
      expect(found.status).toBe(200);
      return found.body.conversation_id;
    }
    const found = await rest<Array<{ id: string } | null>>(url, `/api/v1/app-conversations?ids=${id}`);
    expect(found.status).toBe(200);
    return found.body[0]?.id;
  };

  it('drains, completes an open SSE subscription with the reason, exits 0, and the local service kept the data', async () => {
    const dataDir = tempDataDirForTest('gateway-sigterm-');
    const child = spawnTypeScript('src/index.ts', [], {
      cwd: ROOT,
      env: {
        ...process.env,
        LOG_LEVEL: 'silent',
        DATA_DIR: dataDir,
        LOCAL_SERVICE_PORT: '0',
        LOCAL_SERVICE_API: api,
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    killAfterTest(child);
    let stdout = '';
    child.stdout?.on('data', (chunk) => {
      stdout += String(chunk);
    });
    const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    await vi.waitFor(() => expect(stdout).toMatch(/gateway: http:\/\/\S+\/graphql/), {
      timeout: 20_000,
      interval: 20,
    });
    const url = /gateway: (http:\/\/\S+\/graphql)/.exec(stdout)?.[1] as string;

    const created = await post(url, {
      query:
        'mutation { createConversation(input: { initialUserMessage: "hi" }) { ... on CreateConversationPayload { conversationId } } }',
    });
    const id = (created.json?.data?.createConversation as { conversationId?: string } | undefined)
      ?.conversationId;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    // Started (V1: its start task READY, so it exists upstream and its agent server runs).
    await vi.waitFor(
      async () => {
        const read = await post(url, { query: `{ conversation(id: "${id}") { status } }` });
        expect(read.json?.data).toEqual({ conversation: { status: 'RUNNING' } });
      },
      { timeout: 10_000, interval: 50 },
    );
    const abort = new AbortController();
    onTestFinished(() => abort.abort());
    const stream = new Collector<Result>(
      sseSubscribe(
        url,
        { query: EVENTS, variables: { id, fromBeginning: true } },
        {},
        abort.signal,
      ) as AsyncIterable<Result>,
    );
    await stream.until((items) => items.length > 0);

    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    await stream.finished();
    expect(stream.items.at(-1)?.errors?.[0]?.extensions?.code).toBe('GATEWAY_SHUTTING_DOWN');

    // The store was flushed and closed: a fresh service on the same data dir has the conversation.
    const reopened = await startTestLocalService({ dataDir, api });
    onTestFinished(() => reopened.close({ keepDataDir: true }));
    expect(await storedId(api, reopened.url, id as string)).toBe(id);
  }, 40_000);
});
