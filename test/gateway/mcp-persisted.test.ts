/**
 * The MCP endpoint under an allow-list of persisted operations (`PERSISTED_OPERATIONS_FILE`): the
 * gateway's own MCP documents are admitted and sent by hash, so an agent keeps every tool, the wait
 * and the resources, while a GraphQL client still gets `PERSISTED_QUERY_ONLY` for any document of its
 * own, including the very text of a tool's operation.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TOOLS } from '../../src/gateway/mcp/tools.ts';
import { PersistedOperations } from '../../src/gateway/protection/limits.ts';
import { APIS } from '../helpers/both-apis.ts';
import { serviceAndGatewayForTest } from '../helpers/gateway.ts';

const KEY = 'mcp-persisted-key';

describe.each(APIS)('MCP under an allow-list of persisted operations on %s', (api) => {
  it('serves the tools, the wait and the resources, and the list still refuses other documents', async () => {
    const { gateway } = await serviceAndGatewayForTest({
      api,
      service: { sessionApiKeys: [KEY] },
      hardening: { persistedOperations: new PersistedOperations({}) },
    });
    const client = new Client(
      { name: 'mcp-persisted-test', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', gateway.url), {
        requestInit: { headers: { 'X-Session-API-Key': KEY } },
      }),
    );
    onTestFinished(() => client.close());

    const started = await client.callTool({
      name: 'start_conversation',
      arguments: { initialUserMessage: 'under the list' },
    });
    expect(started.isError).toBeFalsy();
    const id = (started.structuredContent as { createConversation: { conversationId: string } })
      .createConversation.conversationId;
    const listed = await client.callTool({ name: 'list_conversations', arguments: { first: 5 } });
    expect(listed.isError).toBeFalsy();
    const waited = await client.callTool({
      name: 'wait_for_agent',
      arguments: { conversationId: id, timeoutSeconds: 1 },
    });
    expect(waited.isError).toBeFalsy();
    const read = await client.readResource(
      { uri: `openhands://conversations/${id}` },
      { cacheMode: 'bypass' },
    );
    expect((read.contents[0] as { text: string }).text).toContain(`- id: ${id}`);

    const tool = TOOLS.find((candidate) => candidate.name === 'list_conversations');
    const direct = await fetch(new URL('/graphql', gateway.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': KEY },
      body: JSON.stringify({ query: tool?.document, variables: { first: 5 } }),
    });
    const body = (await direct.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
    expect(body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
  });
});
