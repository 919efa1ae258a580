/**
 * Isolation, on both OpenHands APIs: two credentials (two tenants of the real local service) exercise
 * every query, mutation and subscription at the same time through one gateway. Neither ever sees the
 * other's conversations, events, tokens or conversation keys (V0's nested-runtime key, V1's sandbox
 * `session_api_key`): not in answers, not in streams, not via ids taken from the other tenant (read,
 * rename, stop, delete, message, change the agent's state, over HTTP and graphql-ws; subscribe over
 * graphql-ws and SSE), not through the shared upstream sockets of the event bridge (one per
 * conversation and credential).
 */
import { describe, expect, it, vi } from 'vitest';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { APIS } from '../helpers/both-apis.ts';
import { upstreamSessionKey } from '../helpers/both-apis-hardening.ts';
import type { Collector } from '../helpers/collector.ts';
import { serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import { post, type RawAnswer } from '../helpers/http.ts';
import { subscribeOverSse } from '../helpers/sse.ts';

const TENANTS = { a: 'tenant-a-key-111111', b: 'tenant-b-key-222222' } as const;
type Tenant = keyof typeof TENANTS;
const BOTH = ['a', 'b'] as const;
const TRANSPORTS = ['http', 'graphql-ws'] as const;
type Transport = (typeof TRANSPORTS)[number];
const otherThan = (tenant: Tenant): Tenant => (tenant === 'a' ? 'b' : 'a');

const CREATE = `mutation Create($input: CreateConversationInput!) {
  createConversation(input: $input) { __typename ... on CreateConversationPayload { conversationId conversation { id title } } }
}`;
const STATUS = 'query Status($id: ID!) { conversation(id: $id) { status } }';
const LIST = `query List { conversations(first: 100) { edges { node { id conversationId title url sessionApiKey } } } }`;
const LOOKUPS = `query Lookups($id: ID!, $gid: ID!) {
  conversation(id: $id) { conversationId title url sessionApiKey events(first: 100) { edges { cursor } } }
  node(id: $gid) { id ... on Conversation { conversationId } }
  nodes(ids: [$gid]) { id }
}`;
const SEND = `mutation Send($input: SendMessageInput!) {
  sendMessage(input: $input) { __typename ... on SendMessagePayload { event { content } } ... on ConversationUnavailableError { reason } }
}`;
const CHANGE = `mutation Change($input: ChangeAgentStateInput!) {
  changeAgentState(input: $input) { __typename ... on ConversationUnavailableError { reason } }
}`;
const RENAME = `mutation Rename($input: RenameConversationInput!) { renameConversation(input: $input) { __typename } }`;
const STOP = `mutation Stop($input: StopConversationInput!) { stopConversation(input: $input) { __typename } }`;
const DELETE = `mutation Delete($input: DeleteConversationInput!) { deleteConversation(input: $input) { __typename } }`;
const TOKENS = `mutation Tokens($input: AddGitProviderTokenInput!) { addGitProviderToken(input: $input) { __typename } }`;
const UNSET = 'mutation Unset { unsetProviderTokens { statusMessage entries { key value } } }';
// The whole history, then live events: on both APIs (afterEventId: -1 is V0-only, docs/live-events.md).
const EVENTS = `subscription Events($id: ID!) {
  conversationEvents(conversationId: $id, fromBeginning: true) {
    __typename cursor ... on UserMessageEvent { content } ... on AgentMessageEvent { content }
  }
}`;

type Result = { data?: { conversationEvents?: { content?: string } } | null; errors?: unknown[] };
type Json = Record<string, unknown>;

describe.each(APIS)('two credentials at once on %s', (api) => {
  it('see only their own data across every query, mutation and subscription', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api,
      // V0: each running conversation gets a key of its own, as V1's sandboxes always do.
      service: { sessionApiKeys: Object.values(TENANTS), nestedRuntime: true },
      hardening: { rateLimit: false },
    });
    const as = (tenant: Tenant) => ({ 'x-session-api-key': TENANTS[tenant] });
    const sockets = {
      a: wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': TENANTS.a } }),
      b: wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': TENANTS.b } }),
    };
    /** One operation as `tenant` over HTTP or over its graphql-ws socket: the body, parsed and as text. */
    const call = async (
      tenant: Tenant,
      query: string,
      variables: Json = {},
      transport: Transport = 'http',
    ): Promise<Pick<RawAnswer, 'json' | 'text'>> => {
      if (transport === 'http') return post(gateway.url, { query, variables }, as(tenant));
      for await (const result of sockets[tenant].iterate({ query, variables })) {
        return { json: result as RawAnswer['json'], text: JSON.stringify(result) };
      }
      throw new Error('no result over graphql-ws');
    };

    // Creates, interleaved.
    const created: Record<Tenant, string[]> = { a: [], b: [] };
    await Promise.all(
      BOTH.flatMap((tenant) =>
        Array.from({ length: 4 }, async (_, i) => {
          const answer = await call(tenant, CREATE, {
            input: { initialUserMessage: `secret-${tenant}-${i}` },
          });
          const payload = answer.json?.data?.createConversation as { conversationId: string };
          created[tenant].push(payload.conversationId);
        }),
      ),
    );
    // Running, so that each has its own key upstream (and V1's agent servers answer).
    for (const tenant of BOTH) {
      for (const id of created[tenant]) {
        await expect
          .poll(async () => (await call(tenant, STATUS, { id })).json?.data?.conversation, {
            timeout: 5_000,
            interval: 20,
          })
          .toEqual({ status: 'RUNNING' });
      }
    }
    const sessionKeys: Record<Tenant, string[]> = { a: [], b: [] };
    for (const tenant of BOTH) {
      for (const id of created[tenant]) {
        const key = await upstreamSessionKey(api, service.url, id, TENANTS[tenant]);
        expect(key, `${id}'s own key upstream`).toEqual(expect.any(String));
        sessionKeys[tenant].push(key as string);
      }
    }

    // Subscriptions to their own first conversation and to the other's, on both transports, all at once.
    const own: Record<Tenant, Array<Collector<Result>>> = { a: [], b: [] };
    const foreign: Record<Tenant, Array<Collector<Result>>> = { a: [], b: [] };
    for (const tenant of BOTH) {
      const ws = sockets[tenant];
      for (const [streams, id] of [
        [own, created[tenant][0]],
        [foreign, created[otherThan(tenant)][0]],
      ] as const) {
        streams[tenant].push(subscribeOverWs<Result>(ws, { query: EVENTS, variables: { id } }));
        streams[tenant].push(
          subscribeOverSse<Result>(gateway.url, { query: EVENTS, variables: { id } }, as(tenant)),
        );
      }
    }

    // Everything else concurrently, for both tenants.
    const work = BOTH.map(async (tenant) => {
      const mine = created[tenant];
      const theirs = created[otherThan(tenant)];
      const answers: string[] = [];
      const outcomes: Record<string, unknown[]> = {};
      const record = (name: string, value: unknown) => {
        outcomes[name] = [...(outcomes[name] ?? []), value];
      };
      const list = await call(tenant, LIST);
      answers.push(list.text);
      const page = list.json?.data?.conversations as { edges: Array<{ node: Json }> } | undefined;
      record('list', (page?.edges ?? []).map((edge) => edge.node.conversationId).sort());
      for (const id of mine) {
        const lookup = await call(tenant, LOOKUPS, { id, gid: encodeGlobalId('Conversation', id) });
        answers.push(lookup.text);
        expect(lookup.json?.data?.conversation).toMatchObject({ conversationId: id });
        // V0 hands a conversation's key to its owner (its `session_api_key`); V1 never hands it out,
        // not even to the owner (docs/upstream-apis.md: the key stays in the gateway).
        const key = sessionKeys[tenant][mine.indexOf(id)];
        expect(lookup.json?.data?.conversation).toMatchObject({ sessionApiKey: api === 'v0' ? key : null });
      }
      for (const conversationId of theirs) {
        for (const transport of TRANSPORTS) {
          const gid = encodeGlobalId('Conversation', conversationId);
          const lookup = await call(tenant, LOOKUPS, { id: conversationId, gid }, transport);
          answers.push(lookup.text);
          record('lookup', lookup.json?.data);
          const intruding: Array<[string, string, Json]> = [
            ['send', SEND, { conversationId, content: `intrusion-by-${tenant}` }],
            ['change', CHANGE, { conversationId, state: 'STOPPED' }],
            ['rename', RENAME, { conversationId, title: `renamed-by-${tenant}` }],
            ['stop', STOP, { conversationId }],
            ['delete', DELETE, { conversationId }],
          ];
          for (const [name, mutation, input] of intruding) {
            const answer = await call(tenant, mutation, { input }, transport);
            answers.push(answer.text);
            expect(answer.json?.errors, `${name} over ${transport}`).toBeUndefined();
            record(name, Object.values(answer.json?.data ?? {})[0]);
          }
        }
      }
      const send = await call(tenant, SEND, {
        input: { conversationId: mine[0], content: `hello-from-${tenant}` },
      });
      expect(send.json?.data?.sendMessage).toMatchObject({ __typename: 'SendMessagePayload' });
      answers.push(
        (await call(tenant, TOKENS, { input: { provider: 'GITHUB', token: `ghp_${tenant}_token` } })).text,
      );
      answers.push((await call(tenant, UNSET)).text);
      return { answers, outcomes };
    });
    const results = await Promise.all(work);

    for (const [index, tenant] of BOTH.entries()) {
      const other = otherThan(tenant);
      const { answers, outcomes } = results[index] as (typeof results)[number];
      expect(outcomes.list).toEqual([[...created[tenant]].sort()]);
      // Each of the other's four conversations, over both transports.
      const every = <T>(value: T) => Array.from({ length: 4 * TRANSPORTS.length }, () => value);
      expect(outcomes).toMatchObject({
        lookup: every({ conversation: null, node: null, nodes: [null] }),
        send: every({ __typename: 'ConversationUnavailableError', reason: 'NOT_FOUND' }),
        change: every({ __typename: 'ConversationUnavailableError', reason: 'NOT_FOUND' }),
        // V0's server refuses another user's rename with 403; V1's app server answers 404 on every
        // route (docs/upstream-apis.md, "Another user's conversation").
        rename: every({ __typename: api === 'v0' ? 'PermissionDeniedError' : 'ConversationNotFoundError' }),
        stop: every({ __typename: 'ConversationNotFoundError' }),
        delete: every({ __typename: 'ConversationNotFoundError' }),
      });
      const everything = answers.join('\n');
      for (const id of created[other]) expect(everything).not.toContain(id);
      for (const key of sessionKeys[other]) expect(everything).not.toContain(key);
      expect(everything).not.toContain(`secret-${other}`);
      expect(everything).not.toContain(`ghp_${other}`);
    }

    // Each tenant's own streams saw its own message and the agent's reply, nothing of the other's.
    for (const tenant of BOTH) {
      const other = otherThan(tenant);
      for (const stream of own[tenant]) {
        await stream.until((items) => JSON.stringify(items).includes(`You said: hello-from-${tenant}`), 8000);
        const seen = JSON.stringify(stream.items);
        expect(seen).toContain(`secret-${tenant}-`);
        expect(seen).not.toContain(`secret-${other}`);
        expect(seen).not.toContain(`hello-from-${other}`);
        expect(seen).not.toContain('intrusion-by-');
        for (const key of [...sessionKeys.a, ...sessionKeys.b]) expect(seen).not.toContain(key);
      }
      // The other's conversation: the stream ends with a coded error and nothing of it.
      for (const stream of foreign[tenant]) {
        await stream.finished();
        expect(stream.items.map((item) => item.data ?? null)).toEqual([null]);
        const seen = JSON.stringify(stream.items);
        expect(seen).toMatch(/"code":"CONVERSATION_NOT_FOUND"/);
        expect(seen).not.toContain(`secret-${other}`);
        for (const key of sessionKeys[other]) expect(seen).not.toContain(key);
      }
    }

    // Nothing the intruders did changed anything: each owner still has its four, running, untitled.
    for (const tenant of BOTH) {
      const list = await call(tenant, LIST);
      const page = list.json?.data?.conversations as { edges: Array<{ node: Json }> } | undefined;
      const nodes = (page?.edges ?? []).map((edge) => edge.node);
      expect(nodes.map((node) => node.conversationId).sort()).toEqual([...created[tenant]].sort());
      expect(JSON.stringify(nodes)).not.toContain('renamed-by-');
      for (const id of created[tenant])
        expect((await call(tenant, STATUS, { id })).json?.data?.conversation).toEqual({ status: 'RUNNING' });
    }
    // One upstream socket per (conversation, credential) for the two own streams, never shared.
    await vi.waitFor(
      async () => {
        const text = await (await fetch(new URL('/metrics', gateway.url))).text();
        expect(text).toMatch(/^upstream_sockets_open 2$/m);
      },
      { timeout: 5000, interval: 20 },
    );
    const logs = gateway.logs().join('\n');
    for (const key of [...sessionKeys.a, ...sessionKeys.b, ...Object.values(TENANTS)]) {
      expect(logs).not.toContain(key);
    }
  });
});
