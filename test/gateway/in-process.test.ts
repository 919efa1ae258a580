/**
 * Schema-level refusals, in-process through `yoga.fetch` (no gateway port): what the gateway decides
 * from the document and its variables alone, before any upstream call. The upstream is a small server
 * that answers an empty page and counts what reaches it, so "refused before the upstream" is observed,
 * not assumed.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/gateway/observability/logging.ts';
import { createGateway, type GatewayOptions } from '../../src/gateway/yoga.ts';
import { sendJson, startMisbehavingUpstream } from '../helpers/misbehaving-upstream.ts';

type Answer = {
  status: number;
  body: { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> };
};

async function emptyUpstream() {
  return startMisbehavingUpstream((_req, res) => sendJson(res, 200, { results: [], next_page_id: null }));
}

/** A gateway built, never listening, in front of `upstreamUrl`; disposed with the test's `await using`. */
function inProcessGateway(upstreamUrl: string, hardening: GatewayOptions['hardening'] = {}) {
  const gateway = createGateway({
    upstreamUrl,
    upstreamApi: 'v0',
    upstream: { retries: 0 },
    logger: createLogger({ level: 'silent' }),
    hardening: { rateLimit: false, metrics: false, ...hardening },
  });
  return {
    async post(query: string, variables?: Record<string, unknown>): Promise<Answer> {
      const response = await gateway.yoga.fetch('http://gateway/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, body: (await response.json()) as Answer['body'] };
    },
    [Symbol.asyncDispose]: () => gateway.close(),
  };
}

const codesOf = (answer: Answer) => (answer.body.errors ?? []).map((error) => error.extensions?.code);

describe('schema-level refusals, in-process', () => {
  it('refuses deep, aliased, long, directive-heavy and costly operations with QUERY_LIMIT_EXCEEDED, before any upstream call', async () => {
    await using upstream = await emptyUpstream();
    await using gateway = inProcessGateway(upstream.url, {
      queryLimits: { maxDepth: 3, maxAliases: 3, maxTokens: 200, maxDirectives: 3, maxCost: 60 },
    });
    const cases = {
      depth: '{ conversations { edges { node { id } } } }',
      aliases:
        '{ a: node(id: "x") { id } b: node(id: "y") { id } c: node(id: "z") { id } d: node(id: "w") { id } }',
      tokens: `{ ${Array.from({ length: 120 }, (_, i) => `f${i}: __typename`).join(' ')} }`,
      directives: '{ __typename @skip(if: false) @include(if: true) @skip(if: false) @include(if: true) }',
      // Counted once variables are known (operation-cost.ts): 1 + 60 ids x 1 field = 61 > 60.
      cost: `{ nodes(ids: [${Array.from({ length: 60 }, (_, i) => `"${i}"`).join(',')}]) { id } }`,
    };
    for (const [kind, query] of Object.entries(cases)) {
      const answer = await gateway.post(query);
      expect({ kind, status: answer.status, codes: codesOf(answer) }).toEqual({
        kind,
        status: 400,
        codes: expect.arrayContaining(['QUERY_LIMIT_EXCEEDED']),
      });
      expect(answer.body.data ?? null).toBeNull();
      // The message names the limit; armor's "Syntax Error:" prefix would send users looking for a typo.
      expect(answer.body.errors?.[0]?.message).not.toMatch(/^Syntax Error/);
      expect(answer.body.errors?.[0]?.message).toMatch(/limit/i);
    }
    expect(upstream.requests).toHaveLength(0);
    // An ordinary operation still runs, and reaches the upstream once.
    const ok = await gateway.post('{ conversations(first: 1) { pageInfo { hasNextPage } } }');
    expect(ok).toEqual({
      status: 200,
      body: { data: { conversations: { pageInfo: { hasNextPage: false } } } },
    });
    expect(upstream.requests).toHaveLength(1);
  });

  it('answers a page size out of range and a mistyped variable with BAD_USER_INPUT and no upstream call', async () => {
    await using upstream = await emptyUpstream();
    await using gateway = inProcessGateway(upstream.url);
    const tooLarge = await gateway.post('{ conversations(first: 101) { edges { cursor } } }');
    expect({ status: tooLarge.status, codes: codesOf(tooLarge) }).toEqual({
      status: 400,
      codes: ['BAD_USER_INPUT'],
    });
    const mistyped = await gateway.post('query ($n: Int) { conversations(first: $n) { edges { cursor } } }', {
      n: 'twenty',
    });
    expect({ status: mistyped.status, codes: codesOf(mistyped) }).toEqual({
      status: 400,
      codes: ['BAD_USER_INPUT'],
    });
    expect(mistyped.body.data).toBeUndefined();
    expect(upstream.requests).toHaveLength(0);
  });

  it('answers an unknown field with GRAPHQL_VALIDATION_FAILED and, with introspection off, refuses __schema', async () => {
    await using upstream = await emptyUpstream();
    await using gateway = inProcessGateway(upstream.url, { introspection: false });
    const unknown = await gateway.post('{ conversations { nope } }');
    expect({ status: unknown.status, codes: codesOf(unknown) }).toEqual({
      status: 400,
      codes: ['GRAPHQL_VALIDATION_FAILED'],
    });
    const introspection = await gateway.post('{ __schema { queryType { name } } }');
    expect(introspection.status).toBe(400);
    expect(introspection.body.data ?? null).toBeNull();
    // One error per introspection field selected, all of them validation failures.
    expect(new Set(codesOf(introspection))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
    // __typename is not introspection of the schema and still answers.
    expect(await gateway.post('{ __typename }')).toEqual({
      status: 200,
      body: { data: { __typename: 'Query' } },
    });
    expect(upstream.requests).toHaveLength(0);
  });
});
