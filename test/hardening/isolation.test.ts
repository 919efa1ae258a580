/**
 * Isolation: two credentials (two tenants of the real local service) exercise every query, mutation
 * and subscription at the same time through one gateway. Neither ever sees the other's conversations,
 * events or tokens: not in answers, not via ids guessed from the other tenant, not through the shared
 * upstream sockets of the event bridge.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { Collector } from '../helpers/collector.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { post } from '../helpers/http.ts';
import { localServiceForTest } from '../helpers/local-service.ts';
import { sseSubscribe } from '../helpers/sse.ts';

const TENANTS = { a: 'tenant-a-key-111111', b: 'tenant-b-key-222222' } as const;
type Tenant = keyof typeof TENANTS;

const CREATE = `mutation Create($input: CreateConversationInput!) {
  createConversation(input: $input) { __typename ... on CreateConversationPayload { conversationId conversation { id title } } }
}`;
const LIST = `query List { conversations(first: 100) { edges { node { id conversationId title } } } }`;
const LOOKUPS = `query Lookups($id: ID!, $gid: ID!) {
  conversation(id: $id) { conversationId title }
  node(id: $gid) { id ... on Conversation { conversationId } }
  nodes(ids: [$gid]) { id }
}`;
const SEND = `mutation Send($input: SendMessageInput!) {
  sendMessage(input: $input) { __typename ... on SendMessagePayload { event { eventId content } } ... on ConversationUnavailableError { reason } }
}`;
const CHANGE = `mutation Change($input: ChangeAgentStateInput!) {
  changeAgentState(input: $input) { __typename ... on ConversationUnavailableError { reason } }
}`;
const TOKENS = `mutation Tokens($input: AddGitProviderTokenInput!) { addGitProviderToken(input: $input) { __typename } }`;
const UNSET = 'mutation Unset { unsetProviderTokens { statusMessage entries { key value } } }';
const EVENTS = `subscription Events($id: ID!) {
  conversationEvents(conversationId: $id, afterEventId: -1) {
    __typename eventId ... on UserMessageEvent { content } ... on AgentMessageEvent { content }
  }
}`;

type Result = { data?: { conversationEvents?: { content?: string } } | null; errors?: unknown[] };

describe('two credentials at once', () => {
  it('see only their own data across every query, mutation and subscription', async () => {
    const service = await localServiceForTest({ sessionApiKeys: Object.values(TENANTS) });
    const gateway = await gatewayForTest({ upstreamUrl: service.url, hardening: { rateLimit: false } });
    const as = (tenant: Tenant) => ({ 'x-session-api-key': TENANTS[tenant] });
    const call = async (tenant: Tenant, query: string, variables: Record<string, unknown> = {}) => {
      const answer = await post(gateway.url, { query, variables }, as(tenant));
      return answer;
    };

    // Creates, interleaved.
    const created: Record<Tenant, string[]> = { a: [], b: [] };
    await Promise.all(
      (['a', 'b'] as const).flatMap((tenant) =>
        Array.from({ length: 4 }, async (_, i) => {
          const answer = await call(tenant, CREATE, {
            input: { initialUserMessage: `secret-${tenant}-${i}` },
          });
          const payload = answer.json?.data?.createConversation as { conversationId: string };
          created[tenant].push(payload.conversationId);
        }),
      ),
    );

    // Subscriptions on both transports for both tenants, all at once.
    const streams: Record<Tenant, Array<Collector<Result>>> = { a: [], b: [] };
    for (const tenant of ['a', 'b'] as const) {
      const id = created[tenant][0] as string;
      const ws = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': TENANTS[tenant] } });
      streams[tenant].push(
        new Collector(ws.iterate({ query: EVENTS, variables: { id } }) as AsyncIterable<Result>),
      );
      const abort = new AbortController();
      onTestFinished(() => abort.abort());
      streams[tenant].push(
        new Collector(
          sseSubscribe(
            gateway.url,
            { query: EVENTS, variables: { id } },
            as(tenant),
            abort.signal,
          ) as AsyncIterable<Result>,
        ),
      );
    }

    // Everything else concurrently, for both tenants.
    const work = (['a', 'b'] as const).map(async (tenant) => {
      const other: Tenant = tenant === 'a' ? 'b' : 'a';
      const mine = created[tenant];
      const theirs = created[other];
      const results: Array<[string, unknown]> = [];
      const list = await call(tenant, LIST);
      const page = list.json?.data?.conversations as
        | { edges: Array<{ node: { conversationId: string } }> }
        | undefined;
      const listed = (page?.edges ?? []).map((edge) => edge.node.conversationId);
      results.push(['list', listed.sort()]);
      for (const id of mine) {
        const own = await call(tenant, LOOKUPS, { id, gid: encodeGlobalId('Conversation', id) });
        expect(own.json?.data?.conversation).toMatchObject({ conversationId: id });
      }
      for (const id of theirs) {
        const foreign = await call(tenant, LOOKUPS, { id, gid: encodeGlobalId('Conversation', id) });
        results.push(['foreign lookup', foreign.json?.data]);
        const send = await call(tenant, SEND, {
          input: { conversationId: id, content: `intrusion-by-${tenant}` },
        });
        results.push([
          'foreign send',
          (send.json?.data?.sendMessage as { __typename: string } | undefined)?.__typename,
        ]);
        const change = await call(tenant, CHANGE, { input: { conversationId: id, state: 'STOPPED' } });
        results.push([
          'foreign change',
          (change.json?.data?.changeAgentState as { __typename: string } | undefined)?.__typename,
        ]);
      }
      const send = await call(tenant, SEND, {
        input: { conversationId: mine[0], content: `hello-from-${tenant}` },
      });
      expect(send.json?.data?.sendMessage).toMatchObject({ __typename: 'SendMessagePayload' });
      await call(tenant, TOKENS, { input: { provider: 'GITHUB', token: `ghp_${tenant}_token` } });
      const unset = await call(tenant, UNSET);
      results.push(['unset', JSON.stringify(unset.json)]);
      return results;
    });
    const [resultsA, resultsB] = await Promise.all(work);

    for (const [tenant, results] of [
      ['a', resultsA],
      ['b', resultsB],
    ] as const) {
      const other = tenant === 'a' ? 'b' : 'a';
      const list = results?.find(([name]) => name === 'list')?.[1];
      expect(list).toEqual([...created[tenant]].sort());
      for (const [name, value] of results ?? []) {
        if (name === 'foreign lookup')
          expect(value).toEqual({ conversation: null, node: null, nodes: [null] });
        if (name === 'foreign send' || name === 'foreign change')
          expect(value).toBe('ConversationUnavailableError');
      }
      const everything = JSON.stringify(results);
      for (const id of created[other]) expect(everything).not.toContain(id);
      expect(everything).not.toContain(`secret-${other}`);
      expect(everything).not.toContain(`ghp_${other}`);
    }

    // Each tenant's streams saw its own message echo and agent reply, and nothing of the other's.
    for (const tenant of ['a', 'b'] as const) {
      const other = tenant === 'a' ? 'b' : 'a';
      for (const stream of streams[tenant]) {
        await stream.until((items) => JSON.stringify(items).includes(`hello-from-${tenant}`), 8000);
        const seen = JSON.stringify(stream.items);
        expect(seen).toContain(`secret-${tenant}-`);
        expect(seen).not.toContain(`secret-${other}`);
        expect(seen).not.toContain(`hello-from-${other}`);
        expect(seen).not.toContain('intrusion-by-');
      }
    }
    // One upstream socket per (conversation, credential), never shared across the two.
    await vi.waitFor(
      async () => {
        const text = await (await fetch(new URL('/metrics', gateway.url))).text();
        expect(text).toMatch(/^upstream_sockets_open 2$/m);
      },
      { timeout: 5000, interval: 20 },
    );
  });
});
