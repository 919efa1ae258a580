/**
 * The V1 adapter against upstreams the bundled service never imitates, each a small scripted double
 * over real sockets (test/helpers/hostile-upstream.ts): the real app server's text/plain 500, the web
 * UI's HTML fallback and 405 of an older server (one coded error naming the missing route), records
 * with unknown statuses, dashed ids, naive timestamps and omitted fields, a start task that fails or
 * never finishes,
 * unknown event kinds, and where credentials go: the caller's (`X-Access-Token` too) to the app server
 * only, a conversation's own key to its agent server's origin only, never into an answer or a log line.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { gatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { runOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { type HostileUpstream, startHostileUpstream } from '../helpers/hostile-upstream.ts';

type Json = Record<string, unknown>;
type Answer = { data?: Json | null; errors?: Array<{ message: string; extensions?: Json }> };

const HEX = '4d1c0b9ee5f34c6a9d2b7f1e8a0c3b21';
const DASHED = '4d1c0b9e-e5f3-4c6a-9d2b-7f1e8a0c3b21';
const SANDBOX_KEY = 'sandbox-key-3dK9pQ0vLx7Wm2Zr8TbN5yHc1GfJ4sA6eU0iO9pXqR';
const CALLER_KEY = 'caller-key-ZX81spectrum';

const doubles: HostileUpstream[] = [];
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((d) => d.close()));
});

async function double(): Promise<HostileUpstream> {
  const started = await startHostileUpstream();
  doubles.push(started);
  return started;
}

async function gql(
  gateway: TestGateway,
  query: string,
  variables: Json = {},
  headers: Record<string, string> = { 'x-session-api-key': CALLER_KEY },
): Promise<{ body: Answer; text: string }> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  return { body: JSON.parse(text) as Answer, text };
}

/** An AppConversation as a real app server sends it, with `fields` replacing (undefined: leaving out). */
function appConversation(fields: Json = {}): Json {
  return {
    id: HEX,
    created_by_user_id: null,
    sandbox_id: 'oh-agent-server-5kQ2w9XcVbN3mR7tY1uZ8e',
    selected_repository: null,
    selected_branch: null,
    git_provider: null,
    title: 'Fix the tests',
    trigger: 'gui',
    pr_number: [],
    llm_model: 'anthropic/claude-sonnet-4-5',
    metrics: null,
    parent_conversation_id: null,
    sub_conversation_ids: [],
    created_at: '2025-11-28T10:00:00.123456Z',
    updated_at: '2025-11-28T10:00:05.000001Z',
    sandbox_status: 'PAUSED',
    execution_status: null,
    conversation_url: null,
    session_api_key: null,
    ...fields,
  };
}

const TEXT_500 = {
  status: 500,
  text: 'Internal Server Error',
  headers: { 'content-type': 'text/plain; charset=utf-8' },
};
const INDEX_HTML = {
  text: '<!DOCTYPE html><html><body><div id="root"></div></body></html>',
  headers: { 'content-type': 'text/html; charset=utf-8' },
};

const GET = `query($id: ID!) { conversation(id: $id) {
  conversationId title status statusRaw trigger createdAt lastUpdatedAt url sessionApiKey } }`;
const LIST = `{ conversations(first: 5) { edges { node { conversationId status statusRaw title } } } }`;

describe('V1 against hostile app servers', () => {
  it("the real server's text/plain 500 is UPSTREAM_ERROR with the status, never a parse error", async () => {
    const app = await double();
    app.on('GET', '/api/v1/app-conversations/search', TEXT_500);
    const gateway = await gatewayForTest({
      upstreamUrl: app.url,
      upstreamApi: 'v1',
      upstream: { retries: 0 },
    });
    const { body } = await gql(gateway, LIST);
    expect(body.data).toEqual({ conversations: null });
    expect(body.errors?.map((e) => e.extensions)).toEqual([{ code: 'UPSTREAM_ERROR', status: 500 }]);
  });

  it('an older server (web UI page for a GET, 405 for the rest) answers one coded error naming the missing route', async () => {
    const app = await double();
    app.on('GET', '/api/v1/app-conversations/search', INDEX_HTML);
    app.on('GET', '/api/v1/app-conversations', { json: [appConversation()] });
    app.on('DELETE', `/api/v1/app-conversations/${HEX}`, {
      status: 405,
      json: { detail: 'Method Not Allowed' },
    });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1' });
    const listed = await gql(gateway, LIST);
    expect(listed.body.data).toEqual({ conversations: null });
    expect(listed.body.errors?.map((e) => e.extensions)).toEqual([
      { code: 'UPSTREAM_ROUTE_MISSING', status: 200, route: 'GET /api/v1/app-conversations/search' },
    ]);
    const deleted = await gql(
      gateway,
      `mutation($id: ID!) { deleteConversation(input: { conversationId: $id }) { __typename } }`,
      { id: HEX },
    );
    expect(deleted.body.errors?.map((e) => e.extensions)).toEqual([
      { code: 'UPSTREAM_ROUTE_MISSING', status: 405, route: 'DELETE /api/v1/app-conversations/{id}' },
    ]);
    expect(deleted.body.errors?.[0]?.message).toMatch(
      /does not offer DELETE \/api\/v1\/app-conversations\/\{id\}/,
    );
  });

  it('reads odd records: dashed ids, naive timestamps, left-out fields, unknown statuses; an unusable id costs only its record', async () => {
    const app = await double();
    const odd = appConversation({
      id: DASHED,
      title: undefined,
      trigger: undefined,
      created_at: '2026-08-21T18:01:02.123456',
      updated_at: undefined,
      sandbox_status: 'HIBERNATING',
      execution_status: 'dreaming',
    });
    app.on('GET', '/api/v1/app-conversations/search', {
      json: { items: [odd, appConversation({ id: 'not-a-uuid' })], next_page_id: null },
    });
    app.on('GET', '/api/v1/app-conversations', { json: [odd] });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1' });
    const listed = await gql(gateway, LIST);
    expect(listed.body).toEqual({
      data: {
        conversations: {
          edges: [
            {
              node: {
                conversationId: HEX,
                status: 'UNKNOWN',
                statusRaw: 'HIBERNATING',
                title: `Conversation ${HEX}`,
              },
            },
          ],
        },
      },
    });
    expect(gateway.logs().some((line) => line.includes('unreadable upstream record dropped'))).toBe(true);
    const one = await gql(gateway, GET, { id: DASHED });
    expect(one.body).toEqual({
      data: {
        conversation: {
          conversationId: HEX,
          title: `Conversation ${HEX}`,
          status: 'UNKNOWN',
          statusRaw: 'HIBERNATING',
          trigger: null,
          createdAt: '2026-08-21T18:01:02.123456Z',
          lastUpdatedAt: null,
          url: null,
          sessionApiKey: null,
        },
      },
    });
    // The batch get was asked for the hex form, whichever form the caller used.
    expect(app.requests.find((r) => r.path === '/api/v1/app-conversations')?.query.getAll('ids')).toEqual([
      HEX,
    ]);
    // V1's own statuses: unknown values read as UNKNOWN, the strings as sent beside them.
    const statuses = await gql(
      gateway,
      'query($id: ID!) { conversation(id: $id) { executionStatus executionStatusRaw sandboxStatus sandboxStatusRaw } }',
      { id: DASHED },
    );
    expect(statuses.body).toEqual({
      data: {
        conversation: {
          executionStatus: 'UNKNOWN',
          executionStatusRaw: 'dreaming',
          sandboxStatus: 'UNKNOWN',
          sandboxStatusRaw: 'HIBERNATING',
        },
      },
    });
  });

  it('a start task that failed: the conversation reads ERROR, and its history is a coded outcome, scrubbed', async () => {
    const app = await double();
    app.on('GET', '/api/v1/app-conversations', { json: [null] });
    app.on('GET', '/api/v1/app-conversations/start-tasks/search', {
      json: {
        items: [
          {
            id: '9b2e6f0c1d4a4e7b8c3f5a6d7e8f9012',
            created_by_user_id: null,
            status: 'ERROR',
            detail: `clone failed with token ${CALLER_KEY}`,
            app_conversation_id: null,
            sandbox_id: null,
            agent_server_url: null,
            request: {
              conversation_id: DASHED,
              selected_repository: 'acme/widgets',
              trigger: 'gui',
              pr_number: [],
            },
            created_at: '2026-08-21T18:00:00.000001Z',
            updated_at: '2026-08-21T18:00:01.000001Z',
          },
        ],
        next_page_id: null,
      },
    });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1' });
    const { body, text } = await gql(
      gateway,
      `query($id: ID!) { conversation(id: $id) { status selectedRepository events(first: 3) { edges { cursor } } } }`,
      { id: HEX },
    );
    expect(body.data).toEqual({
      conversation: { status: 'ERROR', selectedRepository: 'acme/widgets', events: null },
    });
    expect(body.errors?.map((e) => [e.extensions, e.message])).toEqual([
      [
        { code: 'UPSTREAM_REFUSED', msgId: 'START_TASK$ERROR' },
        'The conversation failed to start: clone failed with token [redacted]',
      ],
    ]);
    expect(text).not.toContain(CALLER_KEY);
  });
});

describe('V1: a start task that never finishes', () => {
  it('reads STARTING with an empty history; a message or state request is a coded refusal, not a wait', async () => {
    const app = await double();
    app.on('GET', '/api/v1/app-conversations', { json: [null] });
    app.on('GET', '/api/v1/app-conversations/start-tasks/search', {
      json: {
        items: [
          {
            id: '9b2e6f0c1d4a4e7b8c3f5a6d7e8f9013',
            created_by_user_id: null,
            // Stuck where a real one waits for a sandbox that never comes up.
            status: 'WAITING_FOR_SANDBOX',
            detail: null,
            app_conversation_id: null,
            sandbox_id: null,
            agent_server_url: null,
            request: { conversation_id: DASHED, trigger: 'gui', pr_number: [] },
            created_at: '2026-08-21T18:00:00.000001Z',
            updated_at: '2026-08-21T18:00:01.000001Z',
          },
        ],
        next_page_id: null,
      },
    });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1' });
    const read = await gql(
      gateway,
      `query($id: ID!) { conversation(id: $id) { status statusRaw events(first: 3) { edges { cursor } pageInfo { hasNextPage } } } }`,
      { id: HEX },
    );
    expect(read.body).toEqual({
      data: {
        conversation: {
          status: 'STARTING',
          statusRaw: 'STARTING',
          events: { edges: [], pageInfo: { hasNextPage: false } },
        },
      },
    });
    const UNAVAILABLE = `__typename ... on ConversationUnavailableError { reason }`;
    const sent = await gql(
      gateway,
      `mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "hi" }) { ${UNAVAILABLE} } }`,
      { id: HEX },
    );
    expect(sent.body.data?.sendMessage).toEqual({
      __typename: 'ConversationUnavailableError',
      reason: 'UNREACHABLE',
    });
    const paused = await gql(
      gateway,
      `mutation($id: ID!) { changeAgentState(input: { conversationId: $id, state: PAUSED }) { ${UNAVAILABLE} } }`,
      { id: HEX },
    );
    expect(paused.body.data?.changeAgentState).toEqual({
      __typename: 'ConversationUnavailableError',
      reason: 'UNREACHABLE',
    });
    // The empty history asked no events route: a conversation still starting has none to read.
    expect(app.requests.some((r) => r.path.includes('/events'))).toBe(false);
  });
});

describe('--upstream-api auto against HTML-answering doubles', () => {
  it("the web UI's page where V0's search should be is \"not V0\": JSON from V1's search makes it V1", async () => {
    const app = await double();
    app.on('GET', '/api/conversations', INDEX_HTML);
    app.on('GET', '/api/v1/app-conversations/search', {
      json: { items: [appConversation()], next_page_id: null },
    });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'auto' });
    const { body } = await gql(gateway, LIST);
    expect(body).toEqual({
      data: {
        conversations: {
          edges: [
            {
              node: { conversationId: HEX, status: 'STOPPED', statusRaw: 'STOPPED', title: 'Fix the tests' },
            },
          ],
        },
      },
    });
    expect((await fetch(new URL('/ready', gateway.url))).headers.get('x-upstream-api')).toBe('v1');
  });

  it('an upstream answering its web page everywhere is neither: /ready says unknown, queries fail coded', async () => {
    const app = await double();
    app.on('GET', /.*/, INDEX_HTML);
    const gateway = await gatewayForTest({
      upstreamUrl: app.url,
      upstreamApi: 'auto',
      upstream: { retries: 0 },
    });
    const { body } = await gql(gateway, LIST);
    expect(body.data).toEqual({ conversations: null });
    expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_ERROR']);
    const ready = await fetch(new URL('/ready', gateway.url));
    expect(ready.headers.get('x-upstream-api')).toBe('unknown');
    expect(gateway.logs().some((line) => line.includes('upstream API:'))).toBe(false);
  });
});

describe('V1 credentials', () => {
  it("forwards the caller's X-Access-Token to the app server as it came", async () => {
    const app = await double();
    app.on('GET', '/api/v1/app-conversations/search', { json: { items: [], next_page_id: null } });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1' });
    const { body } = await gql(gateway, LIST, {}, { 'x-access-token': 'hosted-api-key-123' });
    expect(body).toEqual({ data: { conversations: { edges: [] } } });
    const sent = app.requests.find((r) => r.path === '/api/v1/app-conversations/search');
    expect(sent?.headers['x-access-token']).toBe('hosted-api-key-123');
    expect(sent?.headers['x-session-api-key']).toBeUndefined();
    expect(sent?.headers.authorization).toBeUndefined();
  });

  it('takes X-Access-Token from graphql-ws connectionParams too, and forwards it the same way', async () => {
    const app = await double();
    app.on('GET', '/api/v1/app-conversations/search', { json: { items: [], next_page_id: null } });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1' });
    const client = wsClient(gateway.url, { connectionParams: { 'X-Access-Token': 'hosted-ws-key-456' } });
    expect(await runOverWs(client, LIST)).toEqual({ data: { conversations: { edges: [] } } });
    const sent = app.requests.find((r) => r.path === '/api/v1/app-conversations/search');
    expect(sent?.headers['x-access-token']).toBe('hosted-ws-key-456');
    expect(sent?.headers['x-session-api-key']).toBeUndefined();
  });

  it("sends a conversation's own key only to its agent server; an agent server's 500 echoes it nowhere", async () => {
    const app = await double();
    const agent = await double();
    app.on('GET', '/api/v1/app-conversations', {
      json: [
        appConversation({
          sandbox_status: 'RUNNING',
          execution_status: 'idle',
          conversation_url: `${agent.url}/api/conversations/${HEX}`,
          session_api_key: SANDBOX_KEY,
        }),
      ],
    });
    agent.on('GET', `/api/conversations/${HEX}/events/search`, {
      json: {
        items: [
          {
            id: 'aa11bb22-cc33-4d44-8e55-ff6600778899',
            timestamp: '2026-08-21T18:01:00',
            source: 'environment',
            kind: 'TeleportEvent',
            destination: 'mars',
          },
          {
            id: '5e0d7c3b-2a19-4f6e-8d4c-3b2a1f0e9d8c',
            timestamp: '2026-08-21T18:01:02.123456',
            source: 'user',
            llm_message: {
              role: 'user',
              content: [{ type: 'text', text: 'hi', cache_prompt: false }],
              reasoning_content: null,
            },
            parent_id: null,
            kind: 'MessageEvent',
          },
        ],
        next_page_id: null,
      },
    });
    agent.on('POST', `/api/conversations/${HEX}/events`, {
      status: 500,
      json: { detail: 'Internal Server Error', exception: `bad key ${SANDBOX_KEY}`, error_id: 'abc' },
    });
    const gateway = await gatewayForTest({ upstreamUrl: app.url, upstreamApi: 'v1' });
    const history = await gql(
      gateway,
      `query($id: ID!) { conversation(id: $id) { events(first: 5) { edges { node {
        __typename upstreamKind timestamp ... on UserMessageEvent { content } ... on OtherEvent { raw } } } } } }`,
      { id: HEX },
    );
    expect(history.body.errors).toBeUndefined();
    expect(history.body.data).toEqual({
      conversation: {
        events: {
          edges: [
            {
              node: {
                __typename: 'OtherEvent',
                upstreamKind: 'TeleportEvent',
                timestamp: '2026-08-21T18:01:00.000Z',
                raw: expect.objectContaining({ destination: 'mars' }),
              },
            },
            {
              node: {
                __typename: 'UserMessageEvent',
                upstreamKind: 'MessageEvent',
                timestamp: '2026-08-21T18:01:02.123456Z',
                content: 'hi',
              },
            },
          ],
        },
      },
    });
    const sent = await gql(
      gateway,
      `mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "hello" }) { __typename } }`,
      { id: HEX },
    );
    expect(sent.body.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_ERROR']);
    expect(sent.text + history.text).not.toContain(SANDBOX_KEY);
    expect(gateway.logs().join('\n')).not.toContain(SANDBOX_KEY);
    // The agent server got the conversation's key and nothing of the caller's; the app server never got it.
    for (const request of agent.requests) {
      expect(request.headers['x-session-api-key']).toBe(SANDBOX_KEY);
    }
    expect(agent.requests.find((r) => r.method === 'POST')?.body).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'hello' }],
      run: true,
    });
    for (const request of app.requests) {
      expect(JSON.stringify(request.headers)).not.toContain(SANDBOX_KEY);
      expect(request.headers['x-session-api-key']).toBe(CALLER_KEY);
    }
  });
});
