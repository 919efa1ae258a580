/**
 * The MCP endpoint's limits and the outcomes test/gateway/mcp.test.ts leaves out, on both APIs against
 * the real gateway and the bundled service: `MCP_MAX_CONCURRENT` answered 429 while a wait holds the
 * only slot; refusals answered before any upstream call (counted on the gateway's own upstream client);
 * a credential only the upstream can refuse; and `wait_for_agent` ending because the conversation was
 * stopped (V1: ENDED with the stream's CONVERSATION_STOPPED; V0: the agent's STOPPED state comes first)
 * or because nothing happened (TIMED_OUT).
 */
import {
  Client as ClientV2,
  ProtocolError,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { APIS, type Api, searchPath } from '../helpers/both-apis.ts';
import { seedConversation } from '../helpers/both-apis-live.ts';
import { serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { toolErrorCode as errorCode, type ToolResult } from '../helpers/mcp.ts';

const KEY = 'mcp-limits-key';

/** The agent state the scripted agent ends an answer in (V0 waits for input, V1 ends its run). */
const ANSWERED: Record<Api, string> = { v0: 'AWAITING_USER_INPUT', v1: 'FINISHED' };

/** `wait_for_agent`'s structured result. */
interface Waited {
  outcome: string;
  agentState: string | null;
  cursor: string | null;
  eventCount: number;
  events: Array<{ type: string; source: string | null; text: string | null; cursor: string }>;
  error?: { code: string; message: string };
}

/** A 2026-07-28 client sending `headers` on every request, closed when the test finishes. */
async function modernClient(url: URL, headers: Record<string, string> = { 'X-Session-API-Key': KEY }) {
  const client = new ClientV2(
    { name: 'mcp-limits', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new TransportV2(url, { requestInit: { headers } }));
  onTestFinished(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  return { client, call };
}

/**
 * One POST of a 2025-11-25 `tools/call` with no `initialize` before it (the endpoint is stateless), as
 * raw HTTP so that status, headers and body are the server's own.
 */
function postToolCall(
  url: URL,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = { 'X-Session-API-Key': KEY },
  extra: Record<string, unknown> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name, arguments: args },
      ...extra,
    }),
  });
}

/** The JSON-RPC message of a Streamable HTTP answer: a JSON body, or the first `data:` of an SSE one. */
async function readJsonRpc(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text);
  const data = text.split('\n').find((line) => line.startsWith('data: ') && line.length > 6);
  return JSON.parse(data?.slice(6) ?? '{}');
}

/** POSTs a GraphQL operation to the gateway as the caller with {@link KEY}; answers `data`. */
async function graphql(gateway: TestGateway, query: string, variables: Record<string, unknown>) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': KEY },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data as Record<string, unknown>;
}

/**
 * A conversation whose first turn (the answer to `hello`) is over and stored: answers its id and the
 * cursor of its last stored event, after which nothing happens until someone sends a message.
 */
async function quietConversation(api: Api, serviceUrl: string, gateway: TestGateway) {
  const id = await seedConversation(api, serviceUrl, { message: 'hello', key: KEY });
  let cursor = '';
  await vi.waitFor(
    async () => {
      const data = await graphql(
        gateway,
        `query($id: ID!) { conversation(id: $id) { events(first: 100) {
          edges { cursor node { __typename ... on AgentStateChangedEvent { agentState } } } } } }`,
        { id },
      );
      const edges = (
        data.conversation as {
          events: { edges: Array<{ cursor: string; node: { __typename: string; agentState?: string } }> };
        }
      ).events.edges;
      const last = edges.at(-1);
      expect(last?.node).toEqual({ __typename: 'AgentStateChangedEvent', agentState: ANSWERED[api] });
      cursor = last?.cursor as string;
    },
    { timeout: 5_000, interval: 20 },
  );
  return { id, cursor };
}

describe.each(APIS)('the MCP endpoint on %s: limits, refusals and how a wait ends', (api) => {
  it('answers 429 RATE_LIMITED beyond MCP_MAX_CONCURRENT while a wait holds the slot, and serves again once it ends', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api,
      fastLive: true,
      service: { sessionApiKeys: [KEY] },
      mcp: { maxConcurrent: 1 },
    });
    const url = new URL('/mcp', gateway.url);
    const { id, cursor } = await quietConversation(api, service.url, gateway);
    const { call } = await modernClient(url);

    const waiting = call('wait_for_agent', { conversationId: id, after: cursor, timeoutSeconds: 20 });
    // The wait runs once its live subscriber is attached: it holds the one MCP slot until it answers.
    await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(1), { timeout: 5_000 });
    // The wait reads the upstream meanwhile (its catch-up): count only the searches list_conversations makes.
    const searches = () =>
      gateway.calls.filter((info) => info.method === 'GET' && info.path.split('?')[0] === searchPath(api))
        .length;
    const before = searches();
    const refused = await postToolCall(url, 'list_conversations', { first: 1 });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await refused.json()).toEqual({
      errors: [{ message: 'At most 1 MCP requests may run at once.', extensions: { code: 'RATE_LIMITED' } }],
    });
    expect(searches()).toBe(before);

    // GraphQL is not bounded by the MCP slots: a message through /graphql ends the agent's turn.
    const sent = await graphql(
      gateway,
      `mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }`,
      { input: { conversationId: id, content: 'over to you' } },
    );
    expect(sent.sendMessage).toEqual({ __typename: 'SendMessagePayload' });
    const waited = await waiting;
    expect(waited.structuredContent).toMatchObject({ outcome: 'TURN_OVER', agentState: ANSWERED[api] });

    // The slot is free again: the same request is served.
    const served = await postToolCall(url, 'list_conversations', { first: 1 });
    expect(served.status).toBe(200);
    const answer = (await readJsonRpc(served)) as { result: ToolResult };
    expect(answer.result.isError).toBeFalsy();
    expect(answer.result.structuredContent?.conversations).toMatchObject({
      edges: [{ node: { conversationId: id } }],
    });
    expect(searches()).toBe(before + 1);
  });

  it('refuses before any upstream call: a foreign Origin, a body over the cap, an unknown tool, arguments that do not fit, a malformed credential', async () => {
    const { gateway } = await serviceAndGatewayForTest({
      api,
      service: { sessionApiKeys: [KEY] },
      mcp: { maxBodyBytes: 4096 },
    });
    const url = new URL('/mcp', gateway.url);
    // The control: the same call, served, reaches the upstream (so a count of 0 below means something).
    const control = await postToolCall(url, 'list_conversations', { first: 1 });
    expect(control.status).toBe(200);
    expect(((await readJsonRpc(control)) as { result: ToolResult }).result.isError).toBeFalsy();
    expect(gateway.calls.length).toBeGreaterThan(0);

    const upstreamCallsDuring = async <T>(run: () => Promise<T>): Promise<{ value: T; calls: number }> => {
      const before = gateway.calls.length;
      const value = await run();
      return { value, calls: gateway.calls.length - before };
    };

    const foreign = await upstreamCallsDuring(async () => {
      const response = await postToolCall(
        url,
        'list_conversations',
        { first: 1 },
        {
          'X-Session-API-Key': KEY,
          origin: 'https://evil.example',
        },
      );
      return { status: response.status, body: await response.json() };
    });
    expect(foreign).toEqual({
      value: {
        status: 403,
        body: { errors: [{ message: expect.any(String), extensions: { code: 'ORIGIN_REJECTED' } }] },
      },
      calls: 0,
    });

    const huge = await upstreamCallsDuring(async () => {
      const response = await postToolCall(url, 'list_conversations', { first: 1 }, undefined, {
        padding: 'x'.repeat(4096),
      });
      return { status: response.status, body: await response.json() };
    });
    expect(huge).toEqual({
      value: {
        status: 413,
        body: {
          errors: [
            {
              message: 'An MCP request body may hold at most 4096 bytes.',
              extensions: { code: 'PAYLOAD_TOO_LARGE' },
            },
          ],
        },
      },
      calls: 0,
    });

    const unknownTool = await upstreamCallsDuring(async () =>
      readJsonRpc(await postToolCall(url, 'drop_all_conversations', {})),
    );
    expect(unknownTool).toEqual({
      value: {
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32602, message: expect.stringContaining('drop_all_conversations') },
      },
      calls: 0,
    });
    // The SDK client sees the same protocol error, with its code.
    const { call } = await modernClient(url);
    const thrown = await call('drop_all_conversations', {}).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect((thrown as ProtocolError).code).toBe(-32602);

    for (const [name, args] of [
      ['list_conversations', { first: 'many' }],
      ['list_conversations', { first: 0 }],
      ['get_conversation', {}],
      ['send_message', { conversationId: 'c0ffee', content: 42 }],
      ['wait_for_agent', { conversationId: 'c0ffee', timeoutSeconds: 0 }],
      ['wait_for_agent', { conversationId: 'c0ffee', until: 'forever' }],
      ['list_conversations', { first: 1, bogus: 1 }],
    ] as const) {
      const bad = await upstreamCallsDuring(() => call(name, args));
      expect(bad.value.isError, name).toBe(true);
      expect({ code: errorCode(bad.value), calls: bad.calls }, `${name} ${JSON.stringify(args)}`).toEqual({
        code: 'BAD_USER_INPUT',
        calls: 0,
      });
    }

    const malformed = await modernClient(url, { authorization: 'Basic a2V5OnNlY3JldA==' });
    const refusedCredential = await upstreamCallsDuring(() =>
      malformed.call('list_conversations', { first: 1 }),
    );
    expect(refusedCredential.value.isError).toBe(true);
    expect({ code: errorCode(refusedCredential.value), calls: refusedCredential.calls }).toEqual({
      code: 'UNAUTHENTICATED',
      calls: 0,
    });
    expect(gateway.logs().join('\n')).not.toContain('a2V5OnNlY3JldA==');
  });

  it('a missing or a wrong key is for the upstream to refuse: one call, answered UNAUTHENTICATED, not retried', async () => {
    const { gateway } = await serviceAndGatewayForTest({ api, service: { sessionApiKeys: [KEY] } });
    const url = new URL('/mcp', gateway.url);
    const callers: Array<Record<string, string>> = [
      {},
      { 'X-Session-API-Key': 'a-key-the-service-does-not-know' },
    ];
    for (const headers of callers) {
      const { call } = await modernClient(url, headers);
      const before = gateway.calls.length;
      const refused = await call('list_conversations', { first: 1 });
      expect(refused.isError).toBe(true);
      expect(errorCode(refused)).toBe('UNAUTHENTICATED');
      // The gateway cannot tell a wrong key from a right one (nor is a default key configured): the
      // upstream's search decides, once.
      expect(gateway.calls.slice(before)).toEqual([
        { method: 'GET', path: expect.stringMatching(new RegExp(`^${searchPath(api)}`)), attempt: 1 },
      ]);
    }
  });

  describe('wait_for_agent', () => {
    it("ends when the conversation is stopped during the wait: V1's stream ends (ENDED, CONVERSATION_STOPPED), V0's agent reports STOPPED first (TURN_OVER)", async () => {
      // The agent takes 2 s to answer: the stop lands while it works on the message.
      const { service, gateway } = await serviceAndGatewayForTest({
        api,
        fastLive: true,
        service: { sessionApiKeys: [KEY], agentTimings: { replyMs: 2_000 } },
      });
      const url = new URL('/mcp', gateway.url);
      const { id, cursor } = await quietConversation(api, service.url, gateway);
      const { client, call } = await modernClient(url);
      const sent = await call('send_message', { conversationId: id, content: 'take your time' });
      expect(sent.isError).toBeFalsy();
      const progress: string[] = [];
      const waiting = client.callTool(
        { name: 'wait_for_agent', arguments: { conversationId: id, after: cursor, timeoutSeconds: 20 } },
        { onprogress: (step) => progress.push(step.message ?? '') },
      ) as Promise<ToolResult>;
      // Stopped once the wait has delivered the message (its catch-up is over and its socket live).
      await vi.waitFor(() => expect(progress).toContain('UserMessageEvent'), { timeout: 5_000 });
      const stopped = await call('stop_conversation', { conversationId: id });
      expect(stopped.structuredContent?.stopConversation).toMatchObject({
        __typename: 'StopConversationPayload',
      });
      const waited = await waiting;
      expect(waited.isError).toBeFalsy();
      const result = waited.structuredContent as unknown as Waited;
      expect(result.events[0]).toMatchObject({ type: 'UserMessageEvent', text: 'take your time' });
      expect(result.events.some((event) => event.text?.startsWith('You said'))).toBe(false);
      expect(result.cursor).toBe(result.events.at(-1)?.cursor);
      if (api === 'v1') {
        // V1 stops by pausing the sandbox: PAUSED is no end of a turn, the stream's end is.
        expect(result).toMatchObject({
          outcome: 'ENDED',
          agentState: 'PAUSED',
          error: { code: 'CONVERSATION_STOPPED', message: 'The conversation was stopped.' },
        });
      } else {
        // V0's agent sends its STOPPED state before the stream ends, and STOPPED ends a turn.
        expect(result).toMatchObject({ outcome: 'TURN_OVER', agentState: 'STOPPED' });
        expect(result.error).toBeUndefined();
      }
      await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(0), { timeout: 5_000 });
    });

    it('times out on a quiet conversation: TIMED_OUT, the cursor it was given, and its subscriber released', async () => {
      const { service, gateway } = await serviceAndGatewayForTest({
        api,
        fastLive: true,
        service: { sessionApiKeys: [KEY] },
      });
      const url = new URL('/mcp', gateway.url);
      const { id, cursor } = await quietConversation(api, service.url, gateway);
      // A 2025-11-25 client this time (mcp.test.ts times a wait out from a 2026-07-28 one).
      const client = new ClientV1({ name: 'mcp-limits', version: '1' });
      await client.connect(new TransportV1(url, { requestInit: { headers: { 'X-Session-API-Key': KEY } } }));
      onTestFinished(() => client.close());
      const waiting = client.callTool({
        name: 'wait_for_agent',
        arguments: { conversationId: id, after: cursor, timeoutSeconds: 1 },
      }) as Promise<ToolResult>;
      await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(1), { timeout: 5_000 });
      const waited = await waiting;
      expect(waited.isError).toBeFalsy();
      expect(waited.structuredContent).toEqual({
        outcome: 'TIMED_OUT',
        agentState: null,
        cursor,
        eventCount: 0,
        events: [],
      });
      expect(JSON.parse(waited.content[0]?.text ?? '{}')).toEqual(waited.structuredContent);
      await vi.waitFor(() => expect(gateway.gateway.liveStats().subscribers).toBe(0), { timeout: 5_000 });
    });
  });
});
