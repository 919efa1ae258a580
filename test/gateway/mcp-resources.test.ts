/**
 * Conversations as MCP resources (`openhands://conversations/{id}`), against the real gateway in front
 * of the bundled service, on both APIs: listed, templated and read as the caller by clients of both
 * protocol eras; another tenant's conversation is neither listed nor readable; and a 2026-07-28 client's
 * `subscriptions/listen` is told when its conversation changes, from the live bridge (one live
 * subscriber per watched conversation, released when the listen stream closes), while another tenant
 * listening for the same URI is told nothing.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { APIS } from '../helpers/both-apis.ts';
import { serviceAndGatewayForTest } from '../helpers/gateway.ts';

const KEY = 'mcp-resource-key-a';
const OTHER = 'mcp-resource-key-b';

async function modernClient(url: URL, key: string) {
  const client = new ClientV2(
    { name: 'mcp-resources-test', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new TransportV2(url, { requestInit: { headers: { 'X-Session-API-Key': key } } }));
  onTestFinished(() => client.close());
  return client;
}

async function legacyClient(url: URL, key: string) {
  const client = new ClientV1({ name: 'mcp-resources-test', version: '1' });
  await client.connect(new TransportV1(url, { requestInit: { headers: { 'X-Session-API-Key': key } } }));
  onTestFinished(() => client.close());
  return client;
}

/** Starts a conversation through the start tool; answers its id. */
async function startConversation(client: Awaited<ReturnType<typeof modernClient>>, message: string) {
  const started = await client.callTool({
    name: 'start_conversation',
    arguments: { initialUserMessage: message },
  });
  const payload = (
    started.structuredContent as { createConversation: { conversation: { conversationId: string } } }
  ).createConversation;
  return payload.conversation.conversationId;
}

describe.each(APIS)('conversations as MCP resources on %s', (api) => {
  const start = async (limits: { maxResourceSubscriptions?: number } = {}) => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api,
      fastLive: true,
      service: { sessionApiKeys: [KEY, OTHER] },
      mcp: limits,
    });
    return { service, gateway, url: new URL('/mcp', gateway.url) };
  };

  it("lists, templates and reads the caller's conversations, in both eras, and hides other tenants'", async () => {
    const { url } = await start();
    const client = await modernClient(url, KEY);
    const id = await startConversation(client, 'hello resources');
    const uri = `openhands://conversations/${id}`;

    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((template) => template.uriTemplate)).toEqual([
      'openhands://conversations/{conversationId}',
    ]);
    // V1 lists a conversation once its start task has made it (at once on V0).
    await vi.waitFor(
      async () => {
        const listed = await client.listResources();
        expect(listed.resources.find((resource) => resource.uri === uri)?.mimeType).toBe('text/markdown');
      },
      { timeout: 5_000 },
    );

    await vi.waitFor(
      async () => {
        const read = await client.readResource({ uri }, { cacheMode: 'bypass' });
        const text = (read.contents[0] as { text: string }).text;
        expect(text).toContain(`- id: ${id}`);
        expect(text).toContain('UserMessageEvent');
        expect(text).toContain('hello resources');
      },
      { timeout: 5_000 },
    );

    const legacy = await legacyClient(url, KEY);
    const legacyRead = await legacy.readResource({ uri });
    expect((legacyRead.contents[0] as { text: string }).text).toContain(`- id: ${id}`);
    // The 2025 era is served without sessions, so it is not offered resource subscriptions.
    expect(legacy.getServerCapabilities()?.resources?.subscribe).toBeFalsy();

    const other = await modernClient(url, OTHER);
    expect((await other.listResources()).resources.map((resource) => resource.uri)).not.toContain(uri);
    await expect(other.readResource({ uri }, { cacheMode: 'bypass' })).rejects.toMatchObject({
      code: -32602,
    });
    const otherLegacy = await legacyClient(url, OTHER);
    await expect(otherLegacy.readResource({ uri })).rejects.toMatchObject({ code: -32602 });
    await expect(
      client.readResource({ uri: 'openhands://conversations/not-an-id' }, { cacheMode: 'bypass' }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it('tells a listening 2026-07-28 client when its conversation changes, and no other tenant', async () => {
    const { gateway, url } = await start();
    const client = await modernClient(url, KEY);
    const id = await startConversation(client, 'watch me');
    const uri = `openhands://conversations/${id}`;
    // Let the first turn settle so the update below comes from the message sent after listening.
    await client.callTool({ name: 'wait_for_agent', arguments: { conversationId: id, timeoutSeconds: 2 } });

    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (note) => {
      updates.push(note.params.uri);
    });
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual([uri]);

    const other = await modernClient(url, OTHER);
    const otherUpdates: string[] = [];
    other.setNotificationHandler('notifications/resources/updated', (note) => {
      otherUpdates.push(note.params.uri);
    });
    const otherSubscription = await other.listen({ resourceSubscriptions: [uri] });
    // One watcher per listen stream that can see the conversation: the other tenant's is refused.
    await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(1), { timeout: 5_000 });

    await client.callTool({ name: 'send_message', arguments: { conversationId: id, content: 'changed' } });
    await vi.waitFor(() => expect(updates).toContain(uri), { timeout: 10_000 });
    expect(otherUpdates).toEqual([]);

    await subscription.close();
    await otherSubscription.close();
    await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(0), { timeout: 5_000 });
  });

  it('refuses a listen stream watching more conversations than MCP_MAX_RESOURCE_SUBSCRIPTIONS', async () => {
    const { url } = await start({ maxResourceSubscriptions: 2 });
    const client = await modernClient(url, KEY);
    const uris = ['a', 'b', 'c'].map((id) => `openhands://conversations/${id.repeat(32)}`);
    await expect(client.listen({ resourceSubscriptions: uris })).rejects.toThrow();
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-session-api-key': KEY,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'subscriptions/listen',
        params: { notifications: { resourceSubscriptions: uris } },
      }),
    });
    expect(response.status).toBe(400);
    expect(
      ((await response.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions
        .code,
    ).toBe('QUERY_LIMIT_EXCEEDED');
  });
});
