/**
 * The listening gateway: GraphiQL served offline, health and readiness, graphql-ws on the same path
 * with credentials from connectionParams, and idempotent disposal.
 */
import { describe, expect, it } from 'vitest';
import { serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { runOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { rest } from '../helpers/local-service.ts';

const KEY = 'ws-key';
/** The local service (with one key) and the gateway, closed when the test finishes. */
const start = () => serviceAndGatewayForTest({ service: { sessionApiKeys: [KEY] } });

describe('the listening gateway', () => {
  it('serves the GraphiQL page (no CDN), the example operation and the header hint', async () => {
    const { gateway } = await start();
    const response = await fetch(gateway.url, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Conversation gateway');
    expect(html).toContain('RecentConversations');
    expect(html).toContain('X-Session-API-Key');
    expect(html).not.toMatch(/<script[^>]+src="https?:\/\//);
    expect(html).not.toMatch(/<link[^>]+href="https?:\/\//);
  });

  it('answers /health always and /ready while the upstream is alive', async () => {
    const { service, gateway } = await start();
    const health = await fetch(new URL('/health', gateway.url));
    expect(health.status).toBe(200);
    await health.body?.cancel();
    const ready = await fetch(new URL('/ready', gateway.url));
    expect(ready.status).toBe(200);
    await ready.body?.cancel();
    await service.close();
    const notReady = await fetch(new URL('/ready', gateway.url));
    expect(notReady.status).toBe(503);
    await notReady.body?.cancel();
  });

  it('runs queries over graphql-ws on /graphql with the key from connectionParams', async () => {
    const { service, gateway } = await start();
    const created = await rest<{ conversation_id: string }>(service.url, '/api/conversations', {
      method: 'POST',
      key: KEY,
      body: {},
    });
    const client = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': KEY } });
    const result = await runOverWs(
      client,
      '{ conversations(first: 5) { edges { node { conversationId } } } }',
    );
    expect(result).toEqual({
      data: { conversations: { edges: [{ node: { conversationId: created.body.conversation_id } }] } },
    });

    const wrongKey = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': 'nope' } });
    const refused = await runOverWs(wrongKey, '{ conversations(first: 5) { edges { cursor } } }');
    expect(refused).toMatchObject({
      data: { conversations: null },
      errors: [{ extensions: { code: 'UNAUTHENTICATED' } }],
    });
  });

  it('refuses a graphql-ws connection whose credential is not a string', async () => {
    const { gateway } = await start();
    const client = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': 42 } });
    await expect(runOverWs(client, '{ __typename }')).rejects.toMatchObject({ code: 4403 });
  });

  it('refuses a malformed Authorization header with UNAUTHENTICATED', async () => {
    const { gateway } = await start();
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Basic abc' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = (await response.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('close() is idempotent and frees the port', async () => {
    const { gateway } = await start();
    const url = gateway.url;
    await Promise.all([gateway.close(), gateway.close()]);
    await gateway.close();
    await expect(fetch(url)).rejects.toThrow();
  });
});
