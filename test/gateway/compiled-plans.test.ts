/**
 * The compiled plans (src/gateway/compiled/). The whole suite is their differential test: every gateway
 * the helpers start runs in `verify` mode, so every covered query of every test runs both ways and a
 * byte of difference fails that test (test/setup/plan-comparisons.ts). Here: which documents get a
 * plan; that a plan that meets what only the engine answers (an upstream failure, a null where none may
 * be, a record it cannot read) gives the engine's very bytes in `on` mode, without asking the upstream
 * twice; and that `verify` does compare.
 */
import { type ExecutionResult, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQueryPlan } from '../../src/gateway/compiled/query-plan.ts';
import type { PlanComparison } from '../../src/gateway/compiled/use-compiled-plans.ts';
import { schema } from '../../src/schema/index.ts';
import { gatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import {
  type HostileUpstream,
  hostileId,
  hostileRecord,
  searchPage,
  startHostileUpstream,
} from '../helpers/hostile-upstream.ts';

const CONVERSATION_FIELDS = `id conversationId title status statusRaw runtimeStatus runtimeStatusRaw
  selectedRepository selectedBranch gitProvider gitProviderRaw trigger triggerRaw numConnections url
  sessionApiKey createdAt lastUpdatedAt prNumbers`;
const LIST = `{ conversations(first: 5) { edges { cursor node { ${CONVERSATION_FIELDS} } } pageInfo { hasNextPage endCursor } } }`;
const HISTORY = `query History($id: ID!) { conversation(id: $id) { title events(last: 5) {
  edges { cursor node { __typename eventId timestamp source message upstreamKind
    ... on AgentStateChangeRequestedEvent { requestedState requestedStateRaw } } }
  pageInfo { hasPreviousPage startCursor } } } }`;

describe('which documents get a plan', () => {
  const planOf = (text: string) => compileQueryPlan(schema, parse(text), undefined);

  it('the list and the history, fragments and aliases included', () => {
    expect(planOf(LIST)).not.toBeNull();
    expect(planOf(HISTORY)).not.toBeNull();
    expect(
      planOf(`{ a: conversations(first: 1) { ...Page } } fragment Page on ConversationConnection {
        edges { node { id ... on Conversation { title } } } }`),
    ).not.toBeNull();
    expect(planOf('{ __typename node(id: "x") { __typename id } }')).not.toBeNull();
  });

  it('none for mutations, subscriptions, directives, introspection and fields answering anew each read', () => {
    expect(planOf('mutation { deleteConversation(id: "x") { __typename } }')).toBeNull();
    expect(planOf('subscription { conversationEvents(conversationId: "x") { __typename } }')).toBeNull();
    expect(planOf('query ($on: Boolean!) { conversations @include(if: $on) { __typename } }')).toBeNull();
    expect(planOf('{ __schema { queryType { name } } }')).toBeNull();
    expect(
      planOf('{ conversation(id: "x") { workspace { archive { url expiresAt } } } }'),
      'a freshly sealed archive link differs on every read',
    ).toBeNull();
  });
});

describe('where only the engine can answer, `on` answers its bytes without asking the upstream twice', () => {
  let upstream: HostileUpstream;
  const GOOD = hostileId();
  const ODD = hostileId();
  const FAILING = hostileId();

  beforeAll(async () => {
    upstream = await startHostileUpstream();
  });
  afterAll(() => upstream.close());

  /** The same request to a gateway with plans on and one with them off: answers and upstream calls. */
  async function bothWays(body: { query: string; variables?: Record<string, unknown> }) {
    const answers: Array<{ text: string; calls: number }> = [];
    for (const compiledPlans of ['on', 'off'] as const) {
      const gateway: TestGateway = await gatewayForTest({ upstreamUrl: upstream.url, compiledPlans });
      const before = upstream.requests.length;
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-api-key': 'k' },
        body: JSON.stringify(body),
      });
      answers.push({ text: await response.text(), calls: upstream.requests.length - before });
    }
    const [on, off] = answers as [{ text: string; calls: number }, { text: string; calls: number }];
    expect(on.text).toBe(off.text);
    expect(on.calls).toBe(off.calls);
    return JSON.parse(on.text) as ExecutionResult;
  }

  it('a list with odd records (nulls, unknown values, one without an id) answers as the engine does', async () => {
    upstream.on('GET', '/api/conversations', {
      json: searchPage([
        hostileRecord({ conversation_id: GOOD }),
        hostileRecord({ status: 'SOMETHING_NEW', title: null, created_at: '2026-01-01T10:00:00+02:00' }),
        hostileRecord({ conversation_id: undefined }),
        hostileRecord({ pr_number: ['x', 3], git_provider: 'gitea', trigger: null }),
      ]),
    });
    const result = await bothWays({ query: LIST });
    expect(result.errors).toBeUndefined();
    expect(JSON.stringify(result.data)).toContain('UNKNOWN');
  });

  it('an upstream failure of the list is the engine`s coded error, after one upstream call', async () => {
    upstream.on('GET', '/api/conversations', { status: 500, json: { detail: 'boom' } });
    const result = await bothWays({ query: LIST });
    expect(result.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  });

  it('a conversation the upstream no longer knows, and history of one whose events fail', async () => {
    upstream.on('GET', `/api/conversations/${ODD}`, { status: 404, json: { detail: 'Not Found' } });
    upstream.on('GET', `/api/conversations/${FAILING}`, {
      json: hostileRecord({ conversation_id: FAILING }),
    });
    upstream.on('GET', `/api/conversations/${FAILING}/events`, {
      status: 502,
      text: '<html>bad gateway</html>',
    });
    const missing = await bothWays({ query: HISTORY, variables: { id: ODD } });
    expect(missing.data).toEqual({ conversation: null });
    const failing = await bothWays({ query: HISTORY, variables: { id: FAILING } });
    expect(failing.errors?.[0]?.path).toEqual(['conversation', 'events']);
  });

  it('mistyped variables are the engine`s refusal, with no upstream call', async () => {
    const result = await bothWays({ query: HISTORY, variables: { id: 42.5 } });
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('`verify`', () => {
  it('runs both ways over one set of upstream calls and reports each comparison', async () => {
    const comparisons: PlanComparison[] = [];
    const upstream = await startHostileUpstream();
    try {
      upstream.on('GET', '/api/conversations', { json: searchPage([hostileRecord(), hostileRecord()]) });
      const gateway = await gatewayForTest({
        upstreamUrl: upstream.url,
        compiledPlans: 'verify',
        onPlanComparison: (comparison) => comparisons.push(comparison),
      });
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-api-key': 'k' },
        body: JSON.stringify({ query: LIST }),
      });
      const text = await response.text();
      expect(comparisons).toHaveLength(1);
      expect(comparisons[0]?.plan).toBe(comparisons[0]?.engine);
      expect(comparisons[0]?.engine).toBe(text);
      // The engine ran over the plan's recorded answer: one upstream call in all.
      expect(upstream.requests.filter((request) => request.path === '/api/conversations')).toHaveLength(1);

      // graphql-jit answers a selection's own fields before its fragments' (Relay writes fragments
      // first); the plan repeats that order, not graphql-js's.
      await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-api-key': 'k' },
        body: JSON.stringify({
          query: `{ conversations(first: 2) { edges { node { ...Row ... on Conversation { status } id __typename } } } }
            fragment Row on Conversation { title id conversationId }`,
        }),
      });
      expect(comparisons).toHaveLength(2);
      expect(comparisons[1]?.plan).toBe(comparisons[1]?.engine);
      expect(comparisons[1]?.engine).toMatch(
        /^\{"data":\{"conversations":\{"edges":\[\{"node":\{"id":"[^"]+","__typename":"Conversation","status"/,
      );
    } finally {
      await upstream.close();
    }
  });
});
