/**
 * Operability, on both OpenHands APIs where the upstream is involved (describe.each(APIS)): Prometheus
 * metrics from real traffic (operations, upstream routes and statuses, open subscriptions and upstream
 * sockets, route labels bounded on every server V1 calls: app server, sandboxes, agent servers),
 * OpenTelemetry spans with an in-memory exporter (operation span parenting the upstream spans), and log
 * redaction proven across every path a secret travels (keys, bearer tokens, git tokens, MCP api keys
 * and env values, the conversation's own key; success, 401, upstream failures, rate limiting, invalid
 * input). What reaches no upstream (the operation label's bound, /metrics switched off) runs once.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { startTracing } from '../../src/gateway/observability/tracing.ts';
import { APIS, type Api } from '../helpers/both-apis.ts';
import { upstreamSessionKey } from '../helpers/both-apis-hardening.ts';
import { cursorSubscription, seedConversation } from '../helpers/both-apis-live.ts';
import { Collector } from '../helpers/collector.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { metric, post } from '../helpers/http.ts';
import { localServiceForTest } from '../helpers/local-service.ts';

const KEY = 'obs-key-1234567890';
const LIST = 'query List { conversations(first: 2) { edges { node { id } } } }';

/** The route labels of the list and the lookup by id (V1: the app server's search and batch get). */
const ROUTES: Record<Api, { search: string; lookup: string }> = {
  v0: { search: '/api/conversations', lookup: '/api/conversations/:id' },
  v1: { search: '/api/v1/app-conversations/search', lookup: '/api/v1/app-conversations' },
};

/** Routes the bounded-labels test's calls reach (V1: history and message on the agent server, stop and start on the sandbox). */
const EXPECTED_ROUTES: Record<Api, string[]> = {
  v0: [
    '/api/conversations/:id',
    '/api/conversations/:id/events',
    '/api/conversations/:id/stop',
    '/api/conversations/:id/start',
  ],
  v1: [
    '/api/v1/app-conversations',
    '/api/conversations/:id/events/search',
    '/api/conversations/:id/events',
    '/api/v1/sandboxes/:id/pause',
    '/api/v1/sandboxes/:id/resume',
  ],
};

/** Every value of `label` on `name`'s series in a /metrics text. */
function labelValues(text: string, name: string, label: string): Set<string> {
  const pattern = new RegExp(`^${name}\\{[^}]*${label}="([^"]*)"`, 'gm');
  return new Set([...text.matchAll(pattern)].map((match) => match[1] as string));
}

describe.each(APIS)('/metrics on the %s API', (api) => {
  it('counts operations, upstream calls by route and status, subscriptions and sockets', async () => {
    const service = await localServiceForTest({ api, sessionApiKeys: [KEY] });
    const gateway = await gatewayForTest({ upstreamUrl: service.url, upstreamApi: api });
    const id = await seedConversation(api, service.url, { message: 'hi', key: KEY });
    await post(gateway.url, { query: LIST }, { 'x-session-api-key': KEY });
    await post(
      gateway.url,
      { query: `query One { conversation(id: "${id}") { id } }` },
      { 'x-session-api-key': KEY },
    );
    await post(gateway.url, { query: LIST }, { 'x-session-api-key': 'wrong-key' });

    expect(await metric(gateway.url, 'graphql_operations_total', { operation: 'List', outcome: 'ok' })).toBe(
      1,
    );
    expect(
      await metric(gateway.url, 'graphql_operations_total', { operation: 'List', outcome: 'error' }),
    ).toBe(1);
    expect(await metric(gateway.url, 'graphql_errors_total', { code: 'UNAUTHENTICATED' })).toBe(1);
    expect(await metric(gateway.url, 'graphql_operation_duration_seconds_count', { operation: 'One' })).toBe(
      1,
    );
    const routes = ROUTES[api];
    expect(
      await metric(gateway.url, 'upstream_requests_total', { route: routes.search, status: '200' }),
    ).toBe(1);
    expect(await metric(gateway.url, 'upstream_requests_total', { route: routes.lookup })).toBe(1);
    expect(
      await metric(gateway.url, 'upstream_errors_total', { route: routes.search, code: 'UNAUTHENTICATED' }),
    ).toBe(1);

    const ws = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': KEY } });
    const stream = new Collector(
      ws.iterate({ query: cursorSubscription('cursor'), variables: { id, fromBeginning: true } }),
    );
    await stream.until((items) => items.length > 0);
    expect(await metric(gateway.url, 'graphql_subscriptions_open')).toBe(1);
    // V0: the Socket.IO bridge's socket; V1: the agent server's event WebSocket (liveStats()).
    expect(await metric(gateway.url, 'upstream_sockets_open')).toBe(1);
    await ws.dispose();
    await vi.waitFor(async () => expect(await metric(gateway.url, 'graphql_subscriptions_open')).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
    await vi.waitFor(async () => expect(await metric(gateway.url, 'upstream_sockets_open')).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
    expect(await metric(gateway.url, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    const text = await (await fetch(new URL('/metrics', gateway.url))).text();
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('wrong-key');
  });

  it('keeps upstream route labels bounded: templates, never an id or a host', async () => {
    const service = await localServiceForTest({ api, sessionApiKeys: [KEY] });
    const gateway = await gatewayForTest({ upstreamUrl: service.url, upstreamApi: api });
    const id = await seedConversation(api, service.url, { message: 'hi', key: KEY });
    const headers = { 'x-session-api-key': KEY };
    // History and a message: on V1 the agent server's routes, whose path carries the conversation id.
    const history = await post(
      gateway.url,
      { query: `{ conversation(id: "${id}") { events(first: 5) { edges { cursor } } } }` },
      headers,
    );
    expect(history.json?.errors).toBeUndefined();
    const sent = await post(
      gateway.url,
      {
        query: `mutation { sendMessage(input: { conversationId: "${id}", content: "again" }) { __typename } }`,
      },
      headers,
    );
    expect(sent.json).toEqual({ data: { sendMessage: { __typename: 'SendMessagePayload' } } });
    // Stop and start: on V1 the sandbox routes, whose path carries the sandbox's name.
    for (const mutation of ['stopConversation', 'startConversation']) {
      const changed = await post(
        gateway.url,
        { query: `mutation { ${mutation}(input: { conversationId: "${id}" }) { __typename } }` },
        headers,
      );
      expect(changed.json?.errors, mutation).toBeUndefined();
    }

    const text = await (await fetch(new URL('/metrics', gateway.url))).text();
    const routes = labelValues(text, 'upstream_requests_total', 'route');
    // The calls made are labelled by their templates (V1: the agent server's routes too).
    expect([...routes]).toEqual(expect.arrayContaining(EXPECTED_ROUTES[api]));
    const sandboxName = /oh-agent-server-\w+/;
    for (const route of routes) {
      expect(route, route).toMatch(/^\/[\w/:.-]*$/);
      expect(route, route).not.toContain(id);
      expect(route, route).not.toMatch(/[0-9a-f]{12,}|[0-9a-f]{8}-[0-9a-f]{4}-/i);
      expect(route, route).not.toMatch(sandboxName);
      expect(route, route).not.toMatch(/127\.0\.0\.1|localhost|:\d+/);
    }
  });
});

// These reach no upstream (an operation name's label, the endpoint switched off): run once.
describe('/metrics', () => {
  it('bounds the operation label: odd and surplus names become _other', async () => {
    const service = await localServiceForTest();
    const gateway = await gatewayForTest({ upstreamUrl: service.url, hardening: { rateLimit: false } });
    await Promise.all(
      Array.from({ length: 230 }, (_, i) => post(gateway.url, { query: `query Op${i} { __typename }` })),
    );
    const text = await (await fetch(new URL('/metrics', gateway.url))).text();
    const labels = new Set(
      [...text.matchAll(/^graphql_operations_total\{[^}]*operation="([^"]+)"/gm)].map((m) => m[1]),
    );
    expect(labels.size).toBe(201); // 200 names + _other
    expect(labels.has('_other')).toBe(true);
  });

  it('is not served when switched off', async () => {
    const service = await localServiceForTest();
    const gateway = await gatewayForTest({ upstreamUrl: service.url, hardening: { metrics: false } });
    const response = await fetch(new URL('/metrics', gateway.url));
    expect(response.status).toBe(404);
  });
});

describe.each(APIS)('OpenTelemetry tracing on the %s API', (api) => {
  it('records an operation span with upstream child spans, and no secrets in any attribute', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = await startTracing({ exporter: 'console', spanExporter: exporter });
    onTestFinished(() => tracing.shutdown());
    const service = await localServiceForTest({ api, sessionApiKeys: [KEY] });
    const gateway = await gatewayForTest({
      upstreamUrl: service.url,
      upstreamApi: api,
      hardening: { tracing },
    });
    const answer = await post(gateway.url, { query: LIST }, { 'x-session-api-key': KEY });
    expect(answer.json?.errors).toBeUndefined();
    await post(gateway.url, { query: LIST }, { 'x-session-api-key': 'wrong-key' });

    const spans = exporter.getFinishedSpans();
    const operations = spans.filter((span) => span.name === 'query List');
    const calls = spans.filter((span) => span.name === `GET ${ROUTES[api].search}`);
    expect(operations).toHaveLength(2);
    expect(calls).toHaveLength(2);
    for (const [index, call] of calls.entries()) {
      const parent = operations[index];
      expect(call.spanContext().traceId).toBe(parent?.spanContext().traceId);
      expect(call.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
    }
    expect(calls[0]?.attributes).toMatchObject({
      'http.route': ROUTES[api].search,
      'http.response.status_code': 200,
    });
    expect(calls[1]?.attributes).toMatchObject({
      'http.response.status_code': 401,
      'error.type': 'UNAUTHENTICATED',
    });
    expect(operations[1]?.attributes['graphql.error.codes']).toEqual(['UNAUTHENTICATED']);
    const serialized = JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events]));
    expect(serialized).not.toContain(KEY);
    expect(serialized).not.toContain('wrong-key');
  });
});

describe.each(APIS)('log redaction on the %s API', (api) => {
  it("no secret reaches a log line on any path (success, 401, the conversation's own key, failures, rate limit, bad input)", async () => {
    const secrets = {
      key: 'sk-redaction-key-0001',
      otherKey: 'sk-redaction-key-0002',
      bearer: 'bearer-redaction-token-0003',
      gitToken: 'ghp_redaction_token_0004',
      mcpKey: 'mcp-redaction-key-0005',
      envValue: 'env-redaction-value-0006',
    };
    // V0's nested runtime gives the conversation a key of its own, as V1's sandbox does.
    const service = await localServiceForTest({ api, sessionApiKeys: [secrets.key], nestedRuntime: true });
    const gateway = await gatewayForTest({
      upstreamUrl: service.url,
      upstreamApi: api,
      hardening: { rateLimit: { perSecond: 1, burst: 7 } },
    });
    const id = await seedConversation(api, service.url, { message: 'hi', key: secrets.key });
    let conversationKey: string | null = null;
    await vi.waitFor(
      async () => {
        conversationKey = await upstreamSessionKey(api, service.url, id, secrets.key);
        expect(conversationKey).toEqual(expect.any(String));
      },
      { timeout: 5000, interval: 20 },
    );
    const allSecrets: Record<string, string> = {
      ...secrets,
      conversationKey: conversationKey as unknown as string,
    };
    const create = `mutation Create($input: CreateConversationInput!) { createConversation(input: $input) { __typename } }`;
    const input = {
      mcpConfig: {
        sseServers: [{ url: 'https://mcp.example.com/sse', apiKey: secrets.mcpKey }],
        stdioServers: [{ name: 'fs', command: 'mcp-fs', env: [{ name: 'TOKEN', value: secrets.envValue }] }],
      },
    };
    const headers = { 'x-session-api-key': secrets.key };
    const answers = [
      // A history read: on V1 the gateway asks the agent server with the conversation's own key.
      await post(
        gateway.url,
        { query: `{ conversation(id: "${id}") { events(first: 5) { edges { cursor } } } }` },
        headers,
      ),
      await post(gateway.url, { query: create, variables: { input } }, headers),
      await post(
        gateway.url,
        {
          query: `mutation Add($input: AddGitProviderTokenInput!) { addGitProviderToken(input: $input) { __typename } }`,
          variables: { input: { provider: 'GITHUB', token: secrets.gitToken } },
        },
        headers,
      ),
      await post(
        gateway.url,
        { query: create, variables: { input } },
        { 'x-session-api-key': secrets.otherKey },
      ),
      await post(gateway.url, { query: LIST }, { authorization: `Bearer ${secrets.bearer}` }),
      await post(gateway.url, { query: LIST }, { authorization: `Token ${secrets.bearer}` }),
      await post(
        gateway.url,
        { query: create, variables: { input: { ...input, gitProvider: secrets.gitToken } } },
        headers,
      ),
      await post(gateway.url, { query: `{ conversation(id: "${secrets.key}") { id } }` }, headers),
    ];
    expect(answers[0]?.json?.errors).toBeUndefined();
    // Spend the budget: the rate-limited answers and their log lines carry no key either.
    for (let i = 0; i < 8; i++) answers.push(await post(gateway.url, { query: LIST }, headers));
    expect(answers.some((answer) => answer.status === 429)).toBe(true);
    await service.close(); // upstream failures from here on
    answers.push(
      await post(
        gateway.url,
        { query: create, variables: { input } },
        { 'x-session-api-key': secrets.otherKey },
      ),
    );

    const logs = gateway.logs().join('\n');
    expect(logs).toContain('"operation"'); // the log is really being written
    for (const [name, secret] of Object.entries(allSecrets)) {
      expect(logs.includes(secret), `${name} in the log`).toBe(false);
      for (const answer of answers) expect(answer.text.includes(secret), `${name} in an answer`).toBe(false);
    }
  });
});
