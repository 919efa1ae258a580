import { resolve } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { Collector } from '../helpers/collector.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
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
const EVENTS =
  'subscription Events($id: ID!) { conversationEvents(conversationId: $id, afterEventId: -1) { __typename eventId } }';
/** Live events only: over graphql-ws, a live group's member (live-fan-out.ts). */
const LIVE_EVENTS =
  'subscription Live($id: ID!) { conversationEvents(conversationId: $id) { __typename eventId } }';

type Result = { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> };

describe('RunningGateway.close()', () => {
  it('lets an in-flight query finish, refuses new requests, then closes', async () => {
    const held: Array<() => void> = [];
    const upstream = await misbehavingUpstreamForTest((_req, res) =>
      held.push(() => sendJson(res, 200, { results: [], next_page_id: null })),
    );
    const gateway = await gatewayForTest({ upstreamUrl: upstream.url });
    const inFlight = post(gateway.url, { query: LIST });
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
    expect(answer.json).toEqual({ data: { conversations: { edges: [] } } });
    await closing;
    expect(gateway.logs().some((line) => line.includes('"drained":true'))).toBe(true);
  });

  it('bounds the drain: after the grace period what is left is cut and close() resolves', async () => {
    const upstream = await misbehavingUpstreamForTest(() => {}); // never answers
    const { startGateway } = await import('../../src/gateway/server.ts');
    const { createLogger } = await import('../../src/gateway/observability/logging.ts');
    const running = await startGateway({
      upstreamUrl: upstream.url,
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
    const service = await localServiceForTest();
    const created = await rest<{ conversation_id: string }>(service.url, '/api/conversations', {
      method: 'POST',
      body: { initial_user_msg: 'hello' },
    });
    const id = created.body.conversation_id;
    const gateway = await gatewayForTest({ upstreamUrl: service.url, fastLive: true });
    const ws = wsClient(gateway.url);
    const overWs = new Collector<Result>(
      ws.iterate({ query: EVENTS, variables: { id } }) as AsyncIterable<Result>,
    );
    const abort = new AbortController();
    onTestFinished(() => abort.abort());
    const overSse = new Collector<Result>(
      sseSubscribe(
        gateway.url,
        { query: EVENTS, variables: { id } },
        {},
        abort.signal,
      ) as AsyncIterable<Result>,
    );
    const live = new Collector<Result>(
      ws.iterate({ query: LIVE_EVENTS, variables: { id } }) as AsyncIterable<Result>,
    );
    await overWs.until((items) => items.length > 0);
    await overSse.until((items) => items.length > 0);
    await vi.waitFor(() => expect(gateway.gateway.hardening.shutdown.streams).toBe(3), {
      timeout: 5000,
      interval: 20,
    });

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
    expect(gateway.gateway.eventBridge.stats().upstreamSockets).toBe(0);
  });

  it('refuses operations that arrive on an open graphql-ws connection while draining', async () => {
    const held: Array<() => void> = [];
    const upstream = await misbehavingUpstreamForTest((_req, res) =>
      held.push(() => sendJson(res, 200, { results: [], next_page_id: null })),
    );
    const gateway = await gatewayForTest({ upstreamUrl: upstream.url });
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

describe('the process on SIGTERM', () => {
  const ROOT = resolve(import.meta.dirname, '../..');

  it('drains, completes an open SSE subscription with the reason, exits 0, and the local service kept the data', async () => {
    const dataDir = tempDataDirForTest('gateway-sigterm-');
    const child = spawnTypeScript('src/index.ts', [], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent', DATA_DIR: dataDir, LOCAL_SERVICE_PORT: '0', PORT: '0' },
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
    const abort = new AbortController();
    onTestFinished(() => abort.abort());
    const stream = new Collector<Result>(
      sseSubscribe(url, { query: EVENTS, variables: { id } }, {}, abort.signal) as AsyncIterable<Result>,
    );
    await stream.until((items) => items.length > 0);

    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    await stream.finished();
    expect(stream.items.at(-1)?.errors?.[0]?.extensions?.code).toBe('GATEWAY_SHUTTING_DOWN');

    // The store was flushed and closed: a fresh service on the same data dir has the conversation.
    const reopened = await startTestLocalService({ dataDir });
    onTestFinished(() => reopened.close({ keepDataDir: true }));
    const found = await rest<{ conversation_id: string }>(reopened.url, `/api/conversations/${id}`);
    expect(found.status).toBe(200);
    expect(found.body.conversation_id).toBe(id);
  }, 40_000);
});
