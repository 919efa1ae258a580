/**
 * What only the V1 adapter does, against the real bundled local service speaking V1: the start task's
 * outcome (a failed start is a readable conversation and a coded outcome), the `ids=` batch (N
 * conversations in one query, one upstream call), detection with `--upstream-api auto` (against a V0
 * service, a V1 service, and after the upstream was replaced by one speaking the other API), the
 * conversations' own keys never reaching a log line, and confirming or rejecting an action the agent
 * holds. (Live events on V1: test/live/v1-*.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { gatewayForTest, serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';
import { freeLoopbackPort } from '../helpers/loopback.ts';
import { type Answer, gql, type Json, V1_KEY } from '../helpers/v1-graph.ts';

const KEY = V1_KEY;

const CREATE = `mutation($input: CreateConversationInput!) {
  createConversation(input: $input) { __typename ... on CreateConversationPayload { conversationId conversationStatus } }
}`;
const STATUS = `query($id: ID!) { conversation(id: $id) { conversationId status sandboxStatus: statusRaw } }`;

async function create(gateway: TestGateway, input: Json = {}): Promise<string> {
  const { data } = await gql(gateway, CREATE, { input });
  return ((data?.createConversation ?? {}) as Json).conversationId as string;
}

async function statusOf(gateway: TestGateway, id: string): Promise<unknown> {
  return ((await gql(gateway, STATUS, { id })).data?.conversation as Json | null)?.status;
}

describe('V1: the start task', () => {
  it('a start that fails upstream is a readable conversation in ERROR, and a coded outcome for what needs it', async () => {
    const { gateway } = await serviceAndGatewayForTest({ api: 'v1', service: { sessionApiKeys: [KEY] } });
    // No provider token is stored: cloning the repository fails at PREPARING_REPOSITORY.
    const id = await create(gateway, { repository: 'acme/private', gitProvider: 'GITHUB' });
    await expect.poll(() => statusOf(gateway, id), { timeout: 5_000, interval: 20 }).toBe('ERROR');
    const history = await gql(
      gateway,
      `query($id: ID!) { conversation(id: $id) { status selectedRepository events(first: 5) { edges { cursor } } } }`,
      { id },
    );
    expect(history.data).toEqual({
      conversation: { status: 'ERROR', selectedRepository: 'acme/private', events: null },
    });
    expect(history.errors?.map((e) => [e.extensions?.code, e.message])).toEqual([
      ['UPSTREAM_REFUSED', 'The conversation failed to start: Unable to access repo acme/private'],
    ]);
  });
});

describe('V1: batching', () => {
  it('N conversations in one query cost one upstream call', async () => {
    const { gateway } = await serviceAndGatewayForTest({ api: 'v1', service: { sessionApiKeys: [KEY] } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await create(gateway));
    for (const id of ids) {
      await expect
        .poll(() => statusOf(gateway, id), { timeout: 5_000, interval: 20 })
        .toMatch(/RUNNING|STOPPED/);
    }
    gateway.calls.length = 0;
    const { data, errors } = await gql(
      gateway,
      `query($ids: [ID!]!, $a: ID!, $b: ID!) {
        nodes(ids: $ids) { ... on Conversation { conversationId } }
        a: conversation(id: $a) { title }
        b: conversation(id: $b) { title }
      }`,
      {
        ids: ids.slice(0, 3).map((id) => encodeGlobalId('Conversation', id)),
        // Dashed: the same conversation, whichever form the caller has.
        a: (ids[3] as string).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
        b: ids[4],
      },
    );
    expect(errors).toBeUndefined();
    expect(((data?.nodes ?? []) as Json[]).map((n) => n.conversationId)).toEqual(ids.slice(0, 3));
    expect(data?.a).toEqual({ title: `Conversation ${ids[3]}` });
    expect(gateway.calls.map((call) => `${call.method} ${call.path.split('?')[0]}`)).toEqual([
      'GET /api/v1/app-conversations',
    ]);
    expect(gateway.calls[0]?.path.match(/ids=/g)).toHaveLength(5);
  });
});

describe('--upstream-api auto', () => {
  for (const api of ['v0', 'v1'] as const) {
    it(`finds out a ${api.toUpperCase()} service, logs it once and reports it in /ready`, async () => {
      const { gateway } = await serviceAndGatewayForTest({ api, upstreamApi: 'auto' });
      const { data, errors } = await gql(gateway, `{ conversations(first: 1) { edges { cursor } } }`);
      expect(errors).toBeUndefined();
      expect(data).toEqual({ conversations: { edges: [] } });
      const ready = await fetch(new URL('/ready', gateway.url));
      expect(ready.status).toBe(200);
      expect(ready.headers.get('x-upstream-api')).toBe(api);
      const lines = gateway.logs().filter((line) => line.includes('upstream API'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: `upstream API: ${api} (detected)`, api });
    });
  }

  it('re-checks when the upstream is replaced by one speaking the other API', async () => {
    // On a port outside the ephemeral range, so that it is still free when the other API returns on it.
    const v0 = await localServiceForTest({ api: 'v0', port: await freeLoopbackPort() });
    // No least interval between re-checks: the test need not wait for one to pass.
    const gateway = await gatewayForTest({ upstreamUrl: v0.url, upstreamApi: 'auto', apiRecheckMs: 0 });
    expect((await gql(gateway, `{ conversations(first: 1) { edges { cursor } } }`)).errors).toBeUndefined();
    await v0.close();
    // The same address now answers the V1 API (an upgrade and restart).
    const v1 = await localServiceForTest({ api: 'v1', port: v0.port });
    const { data, errors } = await gql(gateway, CREATE, { input: {} });
    expect(errors).toBeUndefined();
    expect(data?.createConversation).toMatchObject({ conversationStatus: 'STARTING' });
    const found = await rest<unknown[]>(v1.url, `/api/v1/app-conversations/start-tasks/search?limit=5`);
    expect((found.body as unknown as { items: unknown[] }).items).toHaveLength(1);
    expect(gateway.logs().some((line) => line.includes('upstream API changed from v0 to v1'))).toBe(true);
    expect((await fetch(new URL('/ready', gateway.url))).headers.get('x-upstream-api')).toBe('v1');
  });
});

describe('--upstream-api auto, the other way', () => {
  it('a V1 upstream replaced by a V0 one: the V1 search meets a missing route, the gateway asks again and lists from V0', async () => {
    const v1 = await localServiceForTest({ api: 'v1', port: await freeLoopbackPort() });
    const gateway = await gatewayForTest({ upstreamUrl: v1.url, upstreamApi: 'auto', apiRecheckMs: 0 });
    expect((await gql(gateway, `{ conversations(first: 1) { edges { cursor } } }`)).errors).toBeUndefined();
    await v1.close();
    const v0 = await localServiceForTest({ api: 'v0', port: v1.port });
    await rest(v0.url, '/api/conversations', { method: 'POST', body: {} });
    const { data, errors } = await gql(gateway, `{ conversations(first: 5) { edges { node { status } } } }`);
    expect(errors).toBeUndefined();
    expect(data).toEqual({
      conversations: { edges: [{ node: { status: expect.stringMatching(/STARTING|RUNNING/) } }] },
    });
    expect(gateway.logs().some((line) => line.includes('upstream API changed from v1 to v0'))).toBe(true);
  });
});

describe('V1: talking to the agent, and history while the sandbox is paused', () => {
  it("answers the stored echo over REST, a state request as an event, and the app server's copies once paused", async () => {
    const { gateway } = await serviceAndGatewayForTest({ api: 'v1', service: { sessionApiKeys: [KEY] } });
    const id = await create(gateway);
    await expect.poll(() => statusOf(gateway, id), { timeout: 5_000, interval: 20 }).toBe('RUNNING');
    const sent = await gql(
      gateway,
      `mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "ping" }) {
        __typename ... on SendMessagePayload { delivery event { content source eventId cursor } } } }`,
      { id },
    );
    expect(sent.errors).toBeUndefined();
    expect(sent.data?.sendMessage).toMatchObject({
      __typename: 'SendMessagePayload',
      delivery: 'REST',
      event: { content: 'ping', source: 'USER', eventId: null },
    });
    const paused = await gql(
      gateway,
      `mutation($id: ID!) { changeAgentState(input: { conversationId: $id, state: PAUSED }) {
        __typename ... on ChangeAgentStatePayload { event { requestedState source eventId } } } }`,
      { id },
    );
    expect(paused).toEqual({
      data: {
        changeAgentState: {
          __typename: 'ChangeAgentStatePayload',
          event: { requestedState: 'PAUSED', source: 'USER', eventId: null },
        },
      },
    });
    const EVENTS = `query($id: ID!) { conversation(id: $id) { status events(first: 100) {
      edges { cursor node { __typename ... on UserMessageEvent { content } } } } } }`;
    const live = await gql(gateway, EVENTS, { id });
    const stop = await gql(
      gateway,
      `mutation($id: ID!) { stopConversation(input: { conversationId: $id }) { __typename } }`,
      { id },
    );
    expect(stop.data?.stopConversation).toEqual({ __typename: 'StopConversationPayload' });
    gateway.calls.length = 0;
    const copies = await gql(gateway, EVENTS, { id });
    expect(copies.errors).toBeUndefined();
    expect(copies.data?.conversation).toMatchObject({ status: 'STOPPED' });
    // The same stored events in the same order (the copies' file-name order is put back in the log's),
    // from the app server.
    const cursors = (answer: Answer) =>
      (
        (answer.data?.conversation ?? { events: { edges: [] } }) as {
          events: { edges: Array<{ cursor: string }> };
        }
      ).events.edges.map((edge) => edge.cursor);
    expect(cursors(copies)).toEqual(cursors(live));
    expect(JSON.stringify(copies.data)).toContain('"content":"ping"');
    expect(gateway.countCalls('GET', `/api/v1/conversation/${id}/events/search`)).toBe(1);
  });
});

describe('V1: confirming and rejecting a held action', () => {
  it('USER_CONFIRMED runs the action the agent waits on, USER_REJECTED answers it with the rejection', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api: 'v1',
      service: { sessionApiKeys: [KEY] },
    });
    const id = await create(gateway);
    await expect.poll(() => statusOf(gateway, id), { timeout: 5_000, interval: 20 }).toBe('RUNNING');
    // The graph has no confirmation setting (V0 has none either): the policy is set on the agent server.
    const [record] = (
      await rest<Array<{ conversation_url: string; session_api_key: string }>>(
        service.url,
        `/api/v1/app-conversations?ids=${id}`,
        { key: KEY },
      )
    ).body;
    const policy = await fetch(`${record?.conversation_url}/confirmation_policy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': record?.session_api_key ?? '' },
      body: JSON.stringify({ policy: { kind: 'AlwaysConfirm' } }),
    });
    expect(policy.status).toBe(200);

    const HISTORY = `query($id: ID!) { conversation(id: $id) { executionStatus events(first: 100) { edges { node {
      __typename upstreamKind message ... on CommandOutputEvent { output } } } } } }`;
    type Read = { executionStatus: string; events: { edges: Array<{ node: Json }> } };
    const read = async () => (await gql(gateway, HISTORY, { id })).data?.conversation as Read;
    const answer = async (content: string, state: string): Promise<void> => {
      await gql(
        gateway,
        `mutation($id: ID!, $content: String!) { sendMessage(input: { conversationId: $id, content: $content }) { __typename } }`,
        { id, content },
      );
      await expect
        .poll(async () => (await read()).executionStatus, { timeout: 5_000, interval: 20 })
        .toBe('WAITING_FOR_CONFIRMATION');
      const changed = await gql(
        gateway,
        `mutation($id: ID!, $state: RequestableAgentState!) { changeAgentState(input: { conversationId: $id, state: $state }) {
          __typename ... on ChangeAgentStatePayload { event { requestedState } } } }`,
        { id, state },
      );
      expect(changed).toEqual({
        data: {
          changeAgentState: { __typename: 'ChangeAgentStatePayload', event: { requestedState: state } },
        },
      });
    };

    await answer('run: echo confirmed', 'USER_CONFIRMED');
    await expect
      .poll(async () => (await read()).events.edges.map((edge) => edge.node.output).filter(Boolean), {
        timeout: 5_000,
        interval: 20,
      })
      .toEqual(['confirmed']);

    await answer('run: echo refused', 'USER_REJECTED');
    await expect
      .poll(
        async () =>
          (await read()).events.edges.some((edge) => edge.node.upstreamKind === 'UserRejectObservation'),
        {
          timeout: 5_000,
          interval: 20,
        },
      )
      .toBe(true);
    // The rejected command never ran: still only the confirmed one's output.
    expect((await read()).events.edges.map((edge) => edge.node.output).filter(Boolean)).toEqual([
      'confirmed',
    ]);
  });
});

describe('V1: conversation keys', () => {
  it("never appear in the gateway's log lines or answers, whatever the operations", async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api: 'v1',
      service: { sessionApiKeys: [KEY] },
    });
    const id = await create(gateway, { initialUserMessage: 'hello' });
    await expect.poll(() => statusOf(gateway, id), { timeout: 5_000, interval: 20 }).toBe('RUNNING');
    const record = await rest<Array<{ session_api_key: string; conversation_url: string }>>(
      service.url,
      `/api/v1/app-conversations?ids=${id}`,
      { key: KEY },
    );
    const sandboxKey = record.body[0]?.session_api_key as string;
    expect(sandboxKey.length).toBeGreaterThan(20);
    const answers: string[] = [];
    const run = async (query: string, variables: Json = {}) =>
      answers.push(JSON.stringify(await gql(gateway, query, { id, ...variables })));
    await run(`mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "run: echo hi" }) {
      __typename ... on SendMessagePayload { event { content } } } }`);
    await run(
      `query($id: ID!) { conversation(id: $id) { url sessionApiKey events(last: 50) { edges { cursor } } } }`,
    );
    await run(
      `mutation($id: ID!) { changeAgentState(input: { conversationId: $id, state: PAUSED }) { __typename } }`,
    );
    // A cursor naming no stored event, and a conversation that does not exist: failures log too.
    await run(
      `query($id: ID!) { conversation(id: $id) { events(first: 2, after: "WzEsInYxIiwieCIsIiIsIiJd") { edges { cursor } } } }`,
    );
    await run(`query { conversation(id: "${'e'.repeat(32)}") { events(first: 1) { edges { cursor } } } }`);
    expect(answers.join('\n')).not.toContain(sandboxKey);
    expect(answers[1]).toContain('"url":null,"sessionApiKey":null');
    expect(gateway.logs().join('\n')).not.toContain(sandboxKey);
  });
});
