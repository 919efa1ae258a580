/**
 * Operability: Prometheus metrics from real traffic (operations, upstream routes and statuses, open
 * subscriptions and upstream sockets, bounded labels), OpenTelemetry spans with an in-memory exporter
 * (operation span parenting the upstream spans), and log redaction proven across every path a secret
 * travels (keys, bearer tokens, git tokens, MCP api keys and env values; success, 401, upstream
 * failures, rate limiting, invalid input).
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { startTracing } from '../../src/gateway/observability/tracing.ts';
import { Collector } from '../helpers/collector.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { metric, post } from '../helpers/http.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';

const KEY = 'obs-key-1234567890';
const LIST = 'query List { conversations(first: 2) { edges { node { id } } } }';

describe('/metrics', () => {
  it('counts operations, upstream calls by route and status, subscriptions and sockets', async () => {
    const service = await localServiceForTest({ sessionApiKeys: [KEY] });
    const gateway = await gatewayForTest({ upstreamUrl: service.url });
    const created = await rest<{ conversation_id: string }>(service.url, '/api/conversations', {
      method: 'POST',
      key: KEY,
      body: { initial_user_msg: 'hi' },
    });
    const id = created.body.conversation_id;
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
    expect(
      await metric(gateway.url, 'upstream_requests_total', { route: '/api/conversations', status: '200' }),
    ).toBe(1);
    expect(await metric(gateway.url, 'upstream_requests_total', { route: '/api/conversations/:id' })).toBe(1);
    expect(
      await metric(gateway.url, 'upstream_errors_total', {
        route: '/api/conversations',
        code: 'UNAUTHENTICATED',
      }),
    ).toBe(1);

    const ws = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': KEY } });
    const stream = new Collector(
      ws.iterate({
        query: `subscription { conversationEvents(conversationId: "${id}", afterEventId: -1) { eventId } }`,
      }),
    );
    await stream.until((items) => items.length > 0);
    expect(await metric(gateway.url, 'graphql_subscriptions_open')).toBe(1);
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

describe('OpenTelemetry tracing', () => {
  it('records an operation span with upstream child spans, and no secrets in any attribute', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = await startTracing({ exporter: 'console', spanExporter: exporter });
    onTestFinished(() => tracing.shutdown());
    const service = await localServiceForTest({ sessionApiKeys: [KEY] });
    const gateway = await gatewayForTest({ upstreamUrl: service.url, hardening: { tracing } });
    const answer = await post(gateway.url, { query: LIST }, { 'x-session-api-key': KEY });
    expect(answer.json?.errors).toBeUndefined();
    await post(gateway.url, { query: LIST }, { 'x-session-api-key': 'wrong-key' });

    const spans = exporter.getFinishedSpans();
    const operations = spans.filter((span) => span.name === 'query List');
    const calls = spans.filter((span) => span.name === 'GET /api/conversations');
    expect(operations).toHaveLength(2);
    expect(calls).toHaveLength(2);
    for (const [index, call] of calls.entries()) {
      const parent = operations[index];
      expect(call.spanContext().traceId).toBe(parent?.spanContext().traceId);
      expect(call.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
    }
    expect(calls[0]?.attributes).toMatchObject({
      'http.route': '/api/conversations',
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

describe('log redaction', () => {
  it('no secret reaches a log line on any path (success, 401, failures, rate limit, bad input)', async () => {
    const secrets = {
      key: 'sk-redaction-key-0001',
      otherKey: 'sk-redaction-key-0002',
      bearer: 'bearer-redaction-token-0003',
      gitToken: 'ghp_redaction_token_0004',
      mcpKey: 'mcp-redaction-key-0005',
      envValue: 'env-redaction-value-0006',
    };
    const service = await localServiceForTest({ sessionApiKeys: [secrets.key] });
    const gateway = await gatewayForTest({
      upstreamUrl: service.url,
      hardening: { rateLimit: { perSecond: 1, burst: 6 } },
    });
    const create = `mutation Create($input: CreateConversationInput!) { createConversation(input: $input) { __typename } }`;
    const input = {
      mcpConfig: {
        sseServers: [{ url: 'https://mcp.example.com/sse', apiKey: secrets.mcpKey }],
        stdioServers: [{ name: 'fs', command: 'mcp-fs', env: [{ name: 'TOKEN', value: secrets.envValue }] }],
      },
    };
    const headers = { 'x-session-api-key': secrets.key };
    const answers = [
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
    for (const [name, secret] of Object.entries(secrets)) {
      expect(logs.includes(secret), `${name} in the log`).toBe(false);
      for (const answer of answers) expect(answer.text.includes(secret), `${name} in an answer`).toBe(false);
    }
  });
});
