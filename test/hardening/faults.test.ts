/**
 * Fault injection, on both OpenHands APIs: a misbehaving upstream on 127.0.0.1 (slow answers, resets,
 * 5xx, invalid JSON, oversized bodies) in the place of V0's server, V1's app server, or one V1 agent
 * server behind an app server that answers; a V1 agent server cutting the connection in the middle
 * of an operation (a write is never sent twice); and the real local service going away under a live
 * subscription. Every fault becomes a coded error, the gateway keeps serving, memory stays bounded, and
 * it recovers when the upstream does.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { APIS, type Api, searchPath } from '../helpers/both-apis.ts';
import { emptyPage, runningAppConversation } from '../helpers/both-apis-hardening.ts';
import { Collector } from '../helpers/collector.ts';
import { gatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { startHostileUpstream } from '../helpers/hostile-upstream.ts';
import { codes, post } from '../helpers/http.ts';
import { startTestLocalService, tempDataDirForTest } from '../helpers/local-service.ts';
import { freeLoopbackPort } from '../helpers/loopback.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';
import { agentMessage } from '../helpers/v1-socket-double.ts';

const LIST = 'query List { conversations(first: 2) { edges { node { id } } } }';
const HISTORY = 'query History($id: ID!) { conversation(id: $id) { events(first: 2) { edges { cursor } } } }';
const CONVERSATION_ID = '4d1c0b9ee5f34c6a9d2b7f1e8a0c3b21';
const SANDBOX_KEY = 'sandbox-key-faults-Zx9Cv8Bn7Mm6';

type Fault = 'slow' | 'reset' | '500' | '503' | 'invalid-json' | 'oversized' | 'healthy';

/** Streams `bytes` of a JSON-looking body with backpressure; records how much was actually written. */
function streamHuge(res: ServerResponse, bytes: number, written: { bytes: number }) {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const pump = () => {
    while (written.bytes < bytes) {
      written.bytes += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

/**
 * Which server misbehaves: the one the gateway lists from (V0's server, V1's app server: the list
 * fails), or a V1 agent server behind an app server that answers (V1 only, V0 has no second server:
 * the conversation reads, its history fails).
 */
interface Misbehaving {
  api: Api;
  server: 'upstream' | 'agent server';
}
const MISBEHAVING: Misbehaving[] = [
  ...APIS.map((api) => ({ api, server: 'upstream' as const })),
  { api: 'v1', server: 'agent server' },
];

/**
 * The gateway in front of `misbehaving` placed as `server`: the operation that reaches it, its data
 * when that call fails, and its answer once healthy.
 */
async function gatewayInFrontOf(
  { api, server }: Misbehaving,
  misbehaving: { url: string },
  options: Omit<Parameters<typeof gatewayForTest>[0], 'upstreamUrl'>,
) {
  if (server === 'upstream') {
    const gateway = await gatewayForTest({ upstreamUrl: misbehaving.url, upstreamApi: api, ...options });
    return {
      gateway,
      request: { query: LIST },
      failed: { conversations: null },
      recovered: { conversations: { edges: [] } },
    };
  }
  const app = await startHostileUpstream();
  onTestFinished(() => app.close());
  app.on('GET', '/api/v1/app-conversations', {
    json: [runningAppConversation(CONVERSATION_ID, misbehaving.url, SANDBOX_KEY)],
  });
  const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1', ...options });
  return {
    gateway,
    request: { query: HISTORY, variables: { id: CONVERSATION_ID } },
    failed: { conversation: { events: null } },
    recovered: { conversation: { events: { edges: [] } } },
  };
}

describe.each(MISBEHAVING)('a misbehaving $server on $api', (misbehaving) => {
  it('maps every fault to a coded error, never 5xx to the client, and recovers', async () => {
    // The healthy answer: the API's empty list, or an agent server's empty events search.
    const healthy =
      misbehaving.server === 'upstream' ? emptyPage(misbehaving.api) : { items: [], next_page_id: null };
    let fault: Fault = 'healthy';
    const written = { bytes: 0 };
    const upstream = await misbehavingUpstreamForTest((_req, res) => {
      switch (fault) {
        case 'slow':
          setTimeout(() => sendJson(res, 200, healthy), 1500).unref();
          return;
        case 'reset':
          res.socket?.destroy();
          return;
        case '500':
          return sendJson(res, 500, { detail: 'Traceback: session_api_key=sk-upstream-secret' });
        case '503':
          return sendJson(res, 503, { detail: 'down' });
        case 'invalid-json':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"results": [');
          return;
        case 'oversized':
          return streamHuge(res, 64 * 1024 * 1024, written);
        default:
          return sendJson(res, 200, healthy);
      }
    });
    const { gateway, request, failed, recovered } = await gatewayInFrontOf(misbehaving, upstream, {
      upstreamTimeoutMs: 300,
      upstream: { retries: 0, circuitBreaker: false, maxResponseBytes: 256 * 1024 },
      hardening: { rateLimit: false },
    });
    const expected: Record<Exclude<Fault, 'healthy'>, string> = {
      slow: 'UPSTREAM_TIMEOUT',
      reset: 'UPSTREAM_UNAVAILABLE',
      '500': 'UPSTREAM_ERROR',
      '503': 'UPSTREAM_UNAVAILABLE',
      'invalid-json': 'UPSTREAM_ERROR',
      oversized: 'UPSTREAM_ERROR',
    };
    const heapBefore = process.memoryUsage().heapUsed;
    for (const [name, code] of Object.entries(expected)) {
      fault = name as Fault;
      for (let i = 0; i < 3; i++) {
        const answer = await post(gateway.url, request);
        expect({ fault: name, status: answer.status, codes: codes(answer) }).toEqual({
          fault: name,
          status: 200,
          codes: [code],
        });
        expect(answer.json?.data).toEqual(failed);
        expect(answer.text).not.toContain('sk-upstream-secret');
        expect(answer.text).not.toContain('Traceback');
      }
    }
    // The oversized answers were cut off, not buffered: far less than 3 x 64 MiB was ever sent.
    expect(written.bytes).toBeLessThan(3 * 16 * 1024 * 1024);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);

    fault = 'healthy';
    expect((await post(gateway.url, request)).json).toEqual({ data: recovered });
    const health = await fetch(new URL('/health', gateway.url));
    expect(health.status).toBe(200);
    expect(gateway.logs().join('\n')).not.toContain('sk-upstream-secret');
    expect(gateway.logs().join('\n')).not.toContain(SANDBOX_KEY);
    // Every call went to the misbehaving server's own route for the operation.
    expect(upstream.requests.length).toBeGreaterThan(0);
    const route =
      misbehaving.server === 'agent server'
        ? `/api/conversations/${CONVERSATION_ID}/events/search`
        : searchPath(misbehaving.api);
    expect(new Set(upstream.requests.map((r) => r.path.split('?')[0]))).toEqual(new Set([route]));
  });
});

describe('a V1 agent server going away in the middle of an operation (V1 only: V0 has no second server)', () => {
  it('a message cut off after the headers is UPSTREAM_UNAVAILABLE and never sent twice; a history read cut mid-body is read again', async () => {
    const agent = await startHostileUpstream();
    onTestFinished(() => agent.close());
    const app = await startHostileUpstream();
    onTestFinished(() => app.close());
    app.on('GET', '/api/v1/app-conversations', {
      json: [runningAppConversation(CONVERSATION_ID, agent.url, SANDBOX_KEY)],
    });
    const base = `/api/conversations/${CONVERSATION_ID}`;
    // The agent server takes the message, starts its answer, and dies.
    agent.on('POST', `${base}/events`, { json: { success: true }, cut: 'after-headers' });
    const stored = agentMessage('stored before the cut');
    let reads = 0;
    agent.on('GET', `${base}/events/search`, () => {
      reads++;
      const page = { json: { items: [stored], next_page_id: null } };
      return reads === 1 ? { ...page, cut: 'mid-body' as const } : page;
    });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1' });

    const sent = await post(gateway.url, {
      query: `mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "once" }) { __typename } }`,
      variables: { id: CONVERSATION_ID },
    });
    expect(sent.json).toMatchObject({
      data: null,
      errors: [{ extensions: { code: 'UPSTREAM_UNAVAILABLE' } }],
    });
    // A write is not idempotent: retrying it could make the agent answer the message twice.
    expect(agent.requests.filter((request) => request.method === 'POST')).toHaveLength(1);

    const history = await post(gateway.url, {
      query: `query($id: ID!) { conversation(id: $id) { events(first: 2) { edges { node {
        __typename ... on AgentMessageEvent { content } } } } } }`,
      variables: { id: CONVERSATION_ID },
    });
    expect(history.json).toEqual({
      data: {
        conversation: {
          events: {
            edges: [{ node: { __typename: 'AgentMessageEvent', content: 'stored before the cut' } }],
          },
        },
      },
    });
    // The read was cut once and made again.
    expect(reads).toBe(2);
    expect(sent.text + history.text + gateway.logs().join('\n')).not.toContain(SANDBOX_KEY);
  });
});

describe.each(APIS)('the upstream going away under live subscriptions on %s', (api) => {
  it('ends the stream with a coded error, keeps serving, and works again once the upstream is back', async () => {
    const dataDir = tempDataDirForTest();
    // On a port outside the ephemeral range, so that it is still free when the service returns on it.
    const first = await startTestLocalService({ dataDir, api, port: await freeLoopbackPort() });
    let firstOpen = true;
    onTestFinished(async () => {
      if (firstOpen) await first.close({ keepDataDir: true });
    });
    const gateway = await gatewayForTest({
      upstreamUrl: first.url,
      upstreamApi: api,
      fastLive: true,
      live: { reconnect: { initialDelayMs: 20, maxDelayMs: 50, maxAttempts: 3 } },
      upstream: { circuitBreaker: { failureThreshold: 5, resetTimeoutMs: 200 } },
    });
    const id = await runningConversation(gateway, 'hello');
    const ws = wsClient(gateway.url);
    // The whole history, then live events (afterEventId: -1 is V0-only, docs/live-events.md).
    const query = `subscription Events($id: ID!) {
      conversationEvents(conversationId: $id, fromBeginning: true) { __typename cursor ... on UserMessageEvent { content } }
    }`;
    const stream = new Collector(ws.iterate({ query, variables: { id } }));
    await stream.until((items) => items.length > 0);

    // The upstream drops every socket mid-stream (V1: the app server and every agent server) and does
    // not come back in time.
    firstOpen = false;
    await first.close({ keepDataDir: true });
    await vi.waitFor(() => expect(stream.ended).toBe(true), { timeout: 8000, interval: 20 });
    const last = stream.items.at(-1) as { errors?: Array<{ extensions?: { code?: string } }> } | undefined;
    const code =
      last?.errors?.[0]?.extensions?.code ??
      (stream.error as Array<{ extensions?: { code?: string } }> | null)?.[0]?.extensions?.code;
    // Both bridges give up after their reconnect attempts (V1: the app server, asked before each
    // socket, is gone too, so the sandbox reads neither running nor paused).
    expect(code).toBe('CONVERSATION_UNREACHABLE');
    expect((await fetch(new URL('/health', gateway.url))).status).toBe(200);

    // The upstream returns on the same port with the same data: new subscriptions work again.
    const second = await startTestLocalService({ dataDir, port: first.port, api });
    onTestFinished(() => second.close({ keepDataDir: true }));
    expect(second.port).toBe(first.port);
    // The reconnect attempts opened the circuit; after its cool-down one probe goes through. No agent
    // survived the restart (V1: every sandbox is paused), so the client starts the conversation again,
    // then the next subscription works.
    let again: Collector<unknown> | null = null;
    await vi.waitFor(
      async () => {
        if (again === null) {
          const started = await post(gateway.url, {
            query: `mutation($id: ID!) { startConversation(input: { conversationId: $id }) { __typename } }`,
            variables: { id },
          });
          expect(started.json?.data).toEqual({
            startConversation: { __typename: 'StartConversationPayload' },
          });
          again = new Collector(ws.iterate({ query, variables: { id } }));
        }
        const current: Collector<unknown> = again;
        await current.until((items) => items.length > 0 || current.ended, 3000).catch(() => {});
        if (current.items.some((item) => (item as { data?: unknown }).data)) return;
        again = null;
        throw new Error('the new subscription got no event yet');
      },
      { timeout: 8000, interval: 20 },
    );
    const items = (again as Collector<unknown> | null)?.items ?? [];
    expect(items[0]).toMatchObject({ data: { conversationEvents: { cursor: expect.any(String) } } });
    await (again as Collector<unknown> | null)?.until((seen) =>
      JSON.stringify(seen).includes('"content":"hello"'),
    );
  });
});

/** Creates a conversation through the gateway with `message`, and waits until it runs. */
async function runningConversation(gateway: TestGateway, message: string): Promise<string> {
  const created = await post(gateway.url, {
    query: `mutation($input: CreateConversationInput!) {
      createConversation(input: $input) { ... on CreateConversationPayload { conversationId } } }`,
    variables: { input: { initialUserMessage: message } },
  });
  const payload = created.json?.data?.createConversation as { conversationId?: string } | undefined;
  const id = payload?.conversationId as string;
  expect(id).toMatch(/^[0-9a-f]{32}$/);
  await expect
    .poll(
      async () =>
        (
          await post(gateway.url, {
            query: 'query($id: ID!) { conversation(id: $id) { status } }',
            variables: { id },
          })
        ).json?.data?.conversation,
      { timeout: 5_000, interval: 20 },
    )
    .toEqual({ status: 'RUNNING' });
  return id;
}
