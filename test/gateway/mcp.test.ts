/**
 * The MCP endpoint (`/mcp`) against the real gateway in front of the bundled service, on both APIs and
 * in both protocol eras: an SDK v2 client speaking 2026-07-28 (stateless, `server/discover`) and an
 * SDK v1 client speaking 2025-11-25 (`initialize`). Tools run as GraphQL operations with the caller's
 * credential from each request: another tenant's conversation is not found, a tool failure is an
 * `isError` result carrying the gateway's code, a foreign Origin is refused before the SDK sees it.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { APIS, type Api } from '../helpers/both-apis.ts';
import { seedConversation } from '../helpers/both-apis-live.ts';
import { serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { rest } from '../helpers/local-service.ts';
import type { ToolResult } from '../helpers/mcp.ts';
import { changeWorkspace, workspaceRepository } from '../helpers/workspace.ts';

const KEY = 'mcp-key-a';
const OTHER = 'mcp-key-b';

interface Caller {
  era: string;
  listTools(): Promise<Array<{ name: string; inputSchema: unknown; annotations?: Record<string, unknown> }>>;
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
}

/** The id of a conversation's workspace folder on the service (V0: the conversation; V1: its sandbox). */
async function workspaceIdOf(api: Api, serviceUrl: string, id: string): Promise<string> {
  if (api === 'v0') return id;
  const read = await rest<Array<{ sandbox_id: string }>>(serviceUrl, `/api/v1/app-conversations?ids=${id}`, {
    key: KEY,
  });
  return read.body[0]?.sandbox_id as string;
}

/** The JSON-RPC message of a Streamable HTTP answer: a JSON body, or the first `data:` of an SSE one. */
async function readJsonRpc(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text);
  const data = text.split('\n').find((line) => line.startsWith('data: ') && line.length > 6);
  return JSON.parse(data?.slice(6) ?? '{}');
}

const ERAS = ['2026-07-28', '2025-11-25'] as const;

async function connect(era: (typeof ERAS)[number], url: URL, key: string): Promise<Caller> {
  const requestInit = { headers: { 'X-Session-API-Key': key } };
  if (era === '2026-07-28') {
    const client = new ClientV2(
      { name: 'mcp-test', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new TransportV2(url, { requestInit }));
    onTestFinished(() => client.close());
    expect(client.getProtocolEra()).toBe('modern');
    return {
      era: client.getNegotiatedProtocolVersion() ?? '',
      listTools: async () => (await client.listTools()).tools as never,
      call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    };
  }
  const client = new ClientV1({ name: 'mcp-test', version: '1' });
  const transport = new TransportV1(url, { requestInit });
  await client.connect(transport);
  onTestFinished(() => client.close());
  // The stateless legacy fallback: the 2025 handshake is answered, and no session id is issued.
  expect(transport.sessionId).toBeUndefined();
  return {
    era: transport.protocolVersion ?? '',
    listTools: async () => (await client.listTools()).tools as never,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
  };
}

describe.each(APIS)('the MCP endpoint on %s', (api) => {
  const start = async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api,
      fastLive: true,
      service: { sessionApiKeys: [KEY, OTHER] },
    });
    return { service, gateway, url: new URL('/mcp', gateway.url) };
  };

  describe.each(ERAS)('speaking %s', (era) => {
    it('lists the tools with input schemas from GraphQL and annotations', async () => {
      const { url } = await start();
      const mcp = await connect(era, url, KEY);
      expect(mcp.era).toBe(era);
      const tools = await mcp.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
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
      const send = tools.find((tool) => tool.name === 'send_message');
      expect(send?.inputSchema).toEqual({
        type: 'object',
        properties: { conversationId: { type: 'string' }, content: { type: 'string' } },
        required: ['conversationId', 'content'],
        additionalProperties: false,
      });
      expect(tools.find((tool) => tool.name === 'get_conversation')?.annotations).toMatchObject({
        readOnlyHint: true,
      });
      expect(tools.find((tool) => tool.name === 'stop_conversation')?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
      });
    });

    it('starts, lists, gets, messages and diffs conversations as the caller', async () => {
      const { service, url } = await start();
      const mcp = await connect(era, url, KEY);

      const started = await mcp.call('start_conversation', { initialUserMessage: 'hello from MCP' });
      expect(started.isError).toBeFalsy();
      const created = started.structuredContent?.createConversation as {
        __typename: string;
        conversation: { conversationId: string };
      };
      expect(created.__typename).toBe('CreateConversationPayload');
      const id = created.conversation.conversationId;
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(JSON.parse(started.content[0]?.text ?? '{}')).toEqual(started.structuredContent);

      // V1 lists a conversation once its start task has made it (the start itself answers first).
      await vi.waitFor(
        async () => {
          const page = await mcp.call('list_conversations', { first: 10 });
          expect(page.isError).toBeFalsy();
          const conversations = page.structuredContent?.conversations as {
            edges: Array<{ node: { conversationId: string } }>;
          };
          expect(conversations.edges.map((edge) => edge.node.conversationId)).toContain(id);
        },
        { timeout: 5_000 },
      );

      const got = await mcp.call('get_conversation', { id });
      expect(got.structuredContent?.conversation).toMatchObject({ conversationId: id });

      const sent = await mcp.call('send_message', { conversationId: id, content: 'and again' });
      expect(sent.isError).toBeFalsy();
      expect(sent.structuredContent?.sendMessage).toMatchObject({ __typename: 'SendMessagePayload' });

      const events = await mcp.call('read_events', { id, first: 5 });
      expect(events.isError).toBeFalsy();
      const read = events.structuredContent?.conversation as {
        events: { edges: Array<{ node: { cursor: string } }>; pageInfo: { endCursor: string | null } };
      };
      expect(read.events.edges.length).toBeGreaterThan(0);
      const after = await mcp.call('read_events', { id, after: read.events.pageInfo.endCursor });
      expect(after.isError).toBeFalsy();

      const stopped = await mcp.call('stop_conversation', { conversationId: id });
      expect(stopped.structuredContent?.stopConversation).toMatchObject({
        __typename: 'StopConversationPayload',
        conversation: { conversationId: id },
      });

      const seeded = await seedConversation(api, service.url, { key: KEY });
      const folder = await workspaceRepository(
        service.dataDir,
        api,
        await workspaceIdOf(api, service.url, seeded),
      );
      changeWorkspace(folder, { 'notes.md': 'written by the agent\n' });
      const diff = await mcp.call('workspace_diff', { id: seeded, path: 'notes.md' });
      expect(diff.isError).toBeFalsy();
      expect(diff.structuredContent?.conversation).toMatchObject({
        workspace: { diff: { path: 'notes.md', binary: false } },
      });
      const changes = await mcp.call('workspace_changes', { id: seeded });
      expect(changes.structuredContent?.conversation).toMatchObject({
        workspace: { changes: { changes: [{ path: 'notes.md', status: 'ADDED' }] } },
      });
      const file = await mcp.call('read_file', { id: seeded, path: 'notes.md' });
      expect(file.structuredContent?.conversation).toMatchObject({
        workspace: { file: { path: 'notes.md', text: 'written by the agent\n', truncated: false } },
      });
    });

    it("answers a tool failure as isError with the gateway's code, and hides other tenants", async () => {
      const { service, gateway, url } = await start();
      const theirs = await seedConversation(api, service.url, { key: OTHER });
      const mcp = await connect(era, url, KEY);

      const foreign = await mcp.call('get_conversation', { id: theirs });
      expect(foreign.isError).toBe(true);
      expect(JSON.parse(foreign.content[0]?.text ?? '{}').error.code).toBe('CONVERSATION_NOT_FOUND');

      const bad = await mcp.call('list_conversations', { first: 'many' });
      expect(bad.isError).toBe(true);
      expect(JSON.parse(bad.content[0]?.text ?? '{}').error.code).toBe('BAD_USER_INPUT');

      // An unknown tool is the protocol's invalid-params error, not a tool result.
      await expect(mcp.call('no_such_tool', {})).rejects.toThrow(/no_such_tool/);
      // Neither key is in any log line the gateway wrote while serving these calls.
      expect(gateway.logs().length).toBeGreaterThan(0);
      const logs = gateway.logs().join('\n');
      expect(logs).not.toContain(KEY);
      expect(logs).not.toContain(OTHER);
    });
  });

  describe('wait_for_agent', () => {
    /** A 2026-07-28 client with the tool results as these tests read them. */
    const modern = async (url: URL) => {
      const client = new ClientV2(
        { name: 'mcp-test', version: '1' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(new TransportV2(url, { requestInit: { headers: { 'X-Session-API-Key': KEY } } }));
      onTestFinished(() => client.close());
      return client;
    };
    interface Waited {
      outcome: string;
      agentState: string | null;
      cursor: string | null;
      eventCount: number;
      events: Array<{ type: string; source: string | null; text: string | null; cursor: string }>;
    }
    /** Starts a conversation and waits out its first turn: answers its id and the cursor after it. */
    const firstTurn = async (client: Awaited<ReturnType<typeof modern>>) => {
      const started = (await client.callTool({
        name: 'start_conversation',
        arguments: { initialUserMessage: 'hello from MCP' },
      })) as ToolResult;
      const id = (
        started.structuredContent?.createConversation as
          | { conversation?: { conversationId: string } }
          | undefined
      )?.conversation?.conversationId as string;
      let first = '';
      await vi.waitFor(
        async () => {
          const read = (await client.callTool({
            name: 'read_events',
            arguments: { id, first: 1 },
          })) as ToolResult;
          const page = read.structuredContent?.conversation as {
            events: { edges: Array<{ node: { cursor: string } }> };
          } | null;
          first = page?.events.edges[0]?.node.cursor ?? '';
          expect(first).not.toBe('');
        },
        { timeout: 5_000 },
      );
      const waited = (await client.callTool({
        name: 'wait_for_agent',
        arguments: { conversationId: id, after: first, timeoutSeconds: 20 },
      })) as ToolResult;
      expect(waited.isError).toBeFalsy();
      const result = waited.structuredContent as unknown as Waited;
      expect(result.outcome).toBe('TURN_OVER');
      return { id, cursor: result.cursor as string };
    };

    it("answers the agent's turn after a message, from the cursor before it, with progress", async () => {
      const { gateway, url } = await start();
      const client = await modern(url);
      const { id, cursor } = await firstTurn(client);

      const sent = (await client.callTool({
        name: 'send_message',
        arguments: { conversationId: id, content: 'and again' },
      })) as ToolResult;
      expect(sent.isError).toBeFalsy();
      const progress: Array<{ progress: number; message?: string }> = [];
      const waited = (await client.callTool(
        { name: 'wait_for_agent', arguments: { conversationId: id, after: cursor, timeoutSeconds: 20 } },
        { onprogress: (step) => progress.push(step) },
      )) as ToolResult;
      expect(waited.isError).toBeFalsy();
      const result = waited.structuredContent as unknown as Waited;
      expect(result).toMatchObject({
        outcome: 'TURN_OVER',
        agentState: api === 'v0' ? 'AWAITING_USER_INPUT' : 'FINISHED',
      });
      expect(result.events.map((event) => event.type)).toContain('UserMessageEvent');
      expect(result.events.some((event) => event.source === 'AGENT' && event.text)).toBe(true);
      expect(result.cursor).toBe(result.events.at(-1)?.cursor);
      expect(result.cursor).not.toBe(cursor);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.map((step) => step.progress)).toEqual(
        [...progress.map((s) => s.progress)].sort((a, b) => a - b),
      );
      // The subscriber it ran detached once the turn was over.
      await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(0), { timeout: 5_000 });

      // Nothing more happens: a short wait from the last cursor times out with that cursor.
      const quiet = (await client.callTool({
        name: 'wait_for_agent',
        arguments: { conversationId: id, after: result.cursor, timeoutSeconds: 1 },
      })) as ToolResult;
      expect(quiet.structuredContent).toMatchObject({
        outcome: 'TIMED_OUT',
        cursor: result.cursor,
        eventCount: 0,
      });

      const bad = (await client.callTool({
        name: 'wait_for_agent',
        arguments: { conversationId: id, timeoutSeconds: 100_000 },
      })) as ToolResult;
      expect(bad.isError).toBe(true);
      expect(JSON.parse(bad.content[0]?.text ?? '{}').error.code).toBe('BAD_USER_INPUT');
    });

    it('serves a 2025-11-25 client too, with progress, and hides other tenants', async () => {
      const { service, url } = await start();
      const { id, cursor } = await firstTurn(await modern(url));
      const client = new ClientV1({ name: 'mcp-test', version: '1' });
      await client.connect(new TransportV1(url, { requestInit: { headers: { 'X-Session-API-Key': KEY } } }));
      onTestFinished(() => client.close());
      await client.callTool({ name: 'send_message', arguments: { conversationId: id, content: 'more' } });
      const progress: number[] = [];
      const waited = (await client.callTool(
        { name: 'wait_for_agent', arguments: { conversationId: id, after: cursor, timeoutSeconds: 20 } },
        undefined,
        { onprogress: (step) => progress.push(step.progress) },
      )) as ToolResult;
      expect(waited.structuredContent).toMatchObject({
        outcome: 'TURN_OVER',
        agentState: api === 'v0' ? 'AWAITING_USER_INPUT' : 'FINISHED',
      });
      expect(progress.length).toBeGreaterThan(0);

      const theirs = await seedConversation(api, service.url, { key: OTHER });
      const foreign = (await client.callTool({
        name: 'wait_for_agent',
        arguments: { conversationId: theirs, timeoutSeconds: 2 },
      })) as ToolResult;
      expect(foreign.isError).toBe(true);
      expect(JSON.parse(foreign.content[0]?.text ?? '{}').error.code).toBe('CONVERSATION_NOT_FOUND');
    });

    it('releases its live subscriber when the client cancels the wait', async () => {
      const { gateway, url } = await start();
      const client = await modern(url);
      const { id, cursor } = await firstTurn(client);
      await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(0), { timeout: 5_000 });
      const cancel = new AbortController();
      const waiting = client.callTool(
        { name: 'wait_for_agent', arguments: { conversationId: id, after: cursor, timeoutSeconds: 60 } },
        { signal: cancel.signal },
      );
      waiting.catch(() => {});
      await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(1), { timeout: 5_000 });
      cancel.abort('no longer needed');
      await expect(waiting).rejects.toThrow();
      await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(0), { timeout: 5_000 });
    });
  });

  it.each(['2025-06-18', '2025-03-26'])(
    'serves a client of %s statelessly, each request with its own key',
    async (revision) => {
      const { service, url } = await start();
      const theirs = await seedConversation(api, service.url, { key: OTHER });
      const post = (body: unknown, key: string, version?: string) =>
        fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'X-Session-API-Key': key,
            ...(version ? { 'mcp-protocol-version': version } : {}),
          },
          body: JSON.stringify(body),
        });
      const init = await post(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        },
        KEY,
      );
      expect(init.status).toBe(200);
      expect(init.headers.get('mcp-session-id')).toBeNull();
      expect(await readJsonRpc(init)).toMatchObject({ id: 1, result: { protocolVersion: revision } });
      const call = (key: string) =>
        post(
          {
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: { name: 'get_conversation', arguments: { id: theirs } },
          },
          key,
          revision,
        );
      // The same message with the other tenant's key finds the conversation; with ours it is not found.
      expect(await readJsonRpc(await call(OTHER))).toMatchObject({
        result: { structuredContent: { conversation: { conversationId: theirs } } },
      });
      const ours = (await readJsonRpc(await call(KEY))) as { result: ToolResult };
      expect(ours.result.isError).toBe(true);
      expect(JSON.parse(ours.result.content[0]?.text ?? '{}').error.code).toBe('CONVERSATION_NOT_FOUND');
    },
  );

  it('refuses a foreign Origin and a body over the cap before the SDK sees them', async () => {
    const { url } = await start();
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
    };
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'X-Session-API-Key': KEY,
    };
    const foreign = await fetch(url, {
      method: 'POST',
      headers: { ...headers, origin: 'https://evil.example' },
      body: JSON.stringify(initialize),
    });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).errors[0].extensions.code).toBe('ORIGIN_REJECTED');

    const huge = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...initialize, padding: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect((await huge.json()).errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('is not served with MCP_ENDPOINT off', async () => {
    const { gateway } = await serviceAndGatewayForTest({ api, mcp: { enabled: false } });
    const answer = await fetch(new URL('/mcp', gateway.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(answer.status).toBe(404);
  });
});
