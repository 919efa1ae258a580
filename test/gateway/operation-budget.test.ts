/**
 * The per-operation budget and the per-credential fair share, on the real gateway in front of the real
 * local service over HTTP (and graphql-ws): page sizes and id lists counted the same whether literal
 * or variable, the heaviest legitimate operations measured (printed, and equal to the figures
 * docs/operations.md gives) and let through, over-budget
 * operations refused before any upstream call, the per-credential concurrency bound, and upstream
 * failures logged without a line per call.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type DocumentNode,
  type GraphQLInputType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  LoneAnonymousOperationRule,
  type OperationDefinitionNode,
  parse,
  specifiedRules,
  typeFromAST,
  validate,
} from 'graphql';
import type { Dispatcher } from 'undici';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { DEFAULT_QUERY_LIMITS } from '../../src/gateway/protection/limits.ts';
import { estimateOperation } from '../../src/gateway/protection/operation-cost.ts';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { schema } from '../../src/schema/index.ts';
import { DEFAULT_MAX_UPSTREAM_CALLS } from '../../src/upstream/page-walker.ts';
import { Collector } from '../helpers/collector.ts';
import { gatewayForTest, type startTestGateway } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { codes, post } from '../helpers/http.ts';
import { rest, startTestLocalService, type TestLocalService } from '../helpers/local-service.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';
import * as documents from './documents.ts';

const ALICE = 'alice-budget-key';
const BOB = 'bob-budget-key';
const SEEDED = 120;

/** Every Conversation field, with the `__typename` Apollo, urql and Relay add to each selection. */
const ALL_FIELDS = `__typename id conversationId title status statusRaw runtimeStatus runtimeStatusRaw trigger triggerRaw
  gitProvider gitProviderRaw selectedRepository selectedBranch numConnections url sessionApiKey createdAt
  lastUpdatedAt prNumbers`;
const pageField = (first: string, alias = '') => `
  ${alias}conversations(first: ${first}) {
    __typename
    edges { __typename cursor node { ${ALL_FIELDS} } }
    pageInfo { __typename hasNextPage hasPreviousPage startCursor endCursor }
  }`;
const fullPage = (first: string) => `__typename ${pageField(first)}`;
const nodesField = (alias = '') =>
  `${alias}nodes(ids: $ids) { __typename id ... on Conversation { ${ALL_FIELDS} } }`;
const FULL_PAGE_LITERAL = `query FullPage { ${fullPage('100')} }`;
const FULL_PAGE_VARIABLE = `query FullPage($first: Int) { ${fullPage('$first')} }`;
const FULL_NODES = `query FullNodes($ids: [ID!]!) { __typename ${nodesField()} }`;
const PAGE_AND_NODES = `query PageAndNodes($ids: [ID!]!) { ${fullPage('100')} ${nodesField()} }`;
const TWO_PAGES = `query TwoPages { __typename ${pageField('100', 'a: ')} ${pageField('100', 'b: ')} }`;
const TWO_NODES = `query TwoNodes($ids: [ID!]!) { __typename ${nodesField('a: ')} ${nodesField('b: ')} }`;

/**
 * The figures docs/operations.md gives under "Query limits" (cost, upstream calls): the measurement
 * must match them, and the page must still say them (change both together).
 */
const DOCUMENTED_FIGURES = {
  fullPage: { cost: 3102, upstreamCalls: 5 },
  fullNodes: { cost: 2202, upstreamCalls: 100 },
  pageAndNodes: { cost: 5303, upstreamCalls: 105 },
  twoAliasedPages: { cost: 6203, upstreamCalls: 10 },
  twoAliasedNodes: { cost: 4403, upstreamCalls: 200 },
  /** Every documented operation (README, docs/) and test document costs less than this. */
  documentedCostBelow: 1300,
} as const;

let service: TestLocalService;
let aliceIds: string[] = [];
beforeAll(async () => {
  service = await startTestLocalService({ sessionApiKeys: [ALICE, BOB] });
  for (let i = 0; i < SEEDED; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: 20 }, () =>
        rest<{ conversation_id: string }>(service.url, '/api/conversations', {
          method: 'POST',
          key: ALICE,
          body: {},
        }),
      ),
    );
    aliceIds.push(...batch.map((created) => encodeGlobalId('Conversation', created.body.conversation_id)));
  }
  aliceIds = aliceIds.slice(0, SEEDED);
}, 60_000);
afterAll(() => service.close());

async function gatewayWith(options: Parameters<typeof startTestGateway>[0] = { upstreamUrl: '' }) {
  return gatewayForTest({ ...options, upstreamUrl: options.upstreamUrl || service.url });
}

/** Heaviest plausible variables: page sizes and id lists at the maximum (100). */
function heaviestVariables(operation: OperationDefinitionNode): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type as never) as GraphQLInputType | undefined;
    if (!type) continue;
    const inner = isNonNullType(type) ? type.ofType : type;
    const named = getNamedType(type);
    const name = definition.variable.name.value;
    if (isListType(inner)) variables[name] = aliceIds.slice(0, 100);
    else if (named.name === 'Int') variables[name] = 100;
    else if (named.name === 'ID' || named.name === 'String') variables[name] = aliceIds[0];
    else if (named.name === 'Boolean') variables[name] = true;
    else if (isEnumType(named)) variables[name] = named.getValues()[0]?.value;
    else if (isInputObjectType(named)) variables[name] = {};
  }
  return variables;
}

function operationsOf(document: DocumentNode): OperationDefinitionNode[] {
  return document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
}

function measure(label: string, document: DocumentNode) {
  return operationsOf(document).map((operation) => ({
    operation: `${label}${operation.name ? ` ${operation.name.value}` : ''}`,
    ...estimateOperation(
      schema,
      document,
      operation,
      heaviestVariables(operation),
      DEFAULT_MAX_UPSTREAM_CALLS,
    ),
  }));
}

const ROOT = join(import.meta.dirname, '../..');

/**
 * Every `graphql` block of the README (its first query, mutation and subscription) and of docs/ (the
 * schema tour in docs/schema.md, live events, clients), labelled `page block n`.
 */
function documentedBlocks(): { label: string; document: DocumentNode }[] {
  const pages = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((file) => file.endsWith('.md'))
      .sort()
      .map((file) => `docs/${file}`),
  ];
  return pages.flatMap((page) =>
    [...readFileSync(join(ROOT, page), 'utf8').matchAll(/```graphql\n([\s\S]*?)```/g)].map((match, i) => ({
      label: `${page} block ${i + 1}`,
      document: parse(match[1] ?? ''),
    })),
  );
}

/** Validation rules for documentation blocks: several anonymous operations may share one block. */
const DOCS_RULES = specifiedRules.filter((rule) => rule !== LoneAnonymousOperationRule);

describe('the documented operations', () => {
  it('are valid against the schema (README first steps, the schema tour, live events, clients)', () => {
    const blocks = documentedBlocks();
    const labels = blocks.map((block) => block.label);
    // The README's first query, subscription and mutation, and the tour, are among them.
    expect(labels.filter((label) => label.startsWith('README.md')).length).toBeGreaterThanOrEqual(3);
    expect(labels.filter((label) => label.startsWith('docs/schema.md')).length).toBeGreaterThanOrEqual(5);
    const invalid = blocks
      // A block of fragments only (Relay's, compiled by relay-compiler with its own directives) has no operation.
      .filter(({ document }) => operationsOf(document).length > 0)
      .flatMap(({ label, document }) =>
        validate(schema, document, DOCS_RULES).map((error) => `${label}: ${error.message}`),
      );
    expect(invalid).toEqual([]);
  });
});

describe('the cost and upstream-call bound, measured on this schema', () => {
  it('prints the heaviest legitimate operations (all within the defaults) and refuses abusive ones', () => {
    const tour = documentedBlocks();
    const legitimate = [
      ...measure('full page, literal first: 100 +', parse(FULL_PAGE_LITERAL)),
      ...measure('full page, variable $first = 100 +', parse(FULL_PAGE_VARIABLE)),
      ...measure('100 ids, all fields +', parse(FULL_NODES)),
      ...measure('full page and 100 ids +', parse(PAGE_AND_NODES)),
      ...Object.entries(documents).flatMap(([name, document]) =>
        operationsOf(document as DocumentNode).length > 0 ? measure(`documents.ts ${name}:`, document) : [],
      ),
      ...tour.flatMap(({ label, document }) => measure(`${label}:`, document)),
    ];
    console.log(
      `operation cost (limit ${DEFAULT_QUERY_LIMITS.maxCost}) and upstream calls (limit ${DEFAULT_QUERY_LIMITS.maxUpstreamCalls}), variables at their heaviest:\n${legitimate
        .map(
          (row) =>
            `  ${String(row.cost).padStart(5)}  ${String(row.upstreamCalls).padStart(4)}  ${row.operation}`,
        )
        .join('\n')}`,
    );
    expect(legitimate.length).toBeGreaterThan(10);
    for (const row of legitimate) {
      expect(row.cost, row.operation).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxCost);
      expect(row.upstreamCalls, row.operation).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxUpstreamCalls);
    }
    const figures = (row: { cost: number; upstreamCalls: number } | undefined) =>
      row && { cost: row.cost, upstreamCalls: row.upstreamCalls };
    // The literal and the variable page count the same, and as the docs say.
    expect(figures(legitimate[0])).toEqual(DOCUMENTED_FIGURES.fullPage);
    expect(figures(legitimate[1])).toEqual(DOCUMENTED_FIGURES.fullPage);
    expect(figures(legitimate[2])).toEqual(DOCUMENTED_FIGURES.fullNodes);
    expect(figures(legitimate[3])).toEqual(DOCUMENTED_FIGURES.pageAndNodes);
    const documentedAndTests = legitimate.slice(4);
    expect(Math.max(...documentedAndTests.map((row) => row.cost))).toBeLessThan(
      DOCUMENTED_FIGURES.documentedCostBelow,
    );

    // Two of the heaviest pages, or of the heaviest id lists, in one operation are refused.
    const [pages] = measure('2 aliased full pages', parse(TWO_PAGES));
    const [nodes] = measure('2 aliased full nodes(100 ids)', parse(TWO_NODES));
    console.log(`abusive: ${JSON.stringify(pages)} ${JSON.stringify(nodes)}`);
    expect(figures(pages)).toEqual(DOCUMENTED_FIGURES.twoAliasedPages);
    expect(pages?.cost).toBeGreaterThan(DEFAULT_QUERY_LIMITS.maxCost);
    expect(figures(nodes)).toEqual(DOCUMENTED_FIGURES.twoAliasedNodes);
    expect(nodes?.upstreamCalls).toBeGreaterThan(DEFAULT_QUERY_LIMITS.maxUpstreamCalls);
  });

  it('are the figures docs/operations.md gives', () => {
    const page = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const figure = (n: number) => n.toLocaleString('en-US');
    const { fullPage, fullNodes, pageAndNodes, twoAliasedPages, twoAliasedNodes } = DOCUMENTED_FIGURES;
    const text = page.replace(/\s+/g, ' ');
    const phrases = [
      `costs ${figure(fullPage.cost)} (${fullPage.upstreamCalls} calls)`,
      `a full \`nodes(ids:)\` ${figure(fullNodes.cost)} (${fullNodes.upstreamCalls} calls)`,
      `both in one operation ${figure(pageAndNodes.cost)} (${pageAndNodes.upstreamCalls} calls)`,
      `stay below ${figure(DOCUMENTED_FIGURES.documentedCostBelow)}`,
      `Two aliased full pages (${figure(twoAliasedPages.cost)}, ${twoAliasedPages.upstreamCalls} calls)`,
      `two aliased full \`nodes\` (${figure(twoAliasedNodes.cost)}, ${twoAliasedNodes.upstreamCalls} calls)`,
    ];
    expect(
      phrases.filter((phrase) => !text.includes(phrase)),
      'phrases docs/operations.md no longer says',
    ).toEqual([]);
  });
});

describe('page sizes and id lists over HTTP', () => {
  it('lets a full page of 100 with every field and __typename through, literal and variable alike', async () => {
    const gateway = await gatewayWith();
    for (const [query, variables] of [
      [FULL_PAGE_LITERAL, {}],
      [FULL_PAGE_VARIABLE, { first: 100 }],
    ] as const) {
      const answer = await post(gateway.url, { query, variables }, { 'x-session-api-key': ALICE });
      expect(answer.status, answer.text.slice(0, 300)).toBe(200);
      expect(answer.json?.errors).toBeUndefined();
      const connection = answer.json?.data?.conversations as { edges: unknown[]; __typename: string };
      expect(connection.__typename).toBe('ConversationConnection');
      expect(connection.edges).toHaveLength(100);
    }
    const nodes = await post(
      gateway.url,
      { query: FULL_NODES, variables: { ids: aliceIds.slice(0, 100) } },
      { 'x-session-api-key': ALICE },
    );
    expect(nodes.json?.errors).toBeUndefined();
    expect((nodes.json?.data?.nodes as Array<{ id: string }> | undefined)?.map((node) => node.id)).toEqual(
      aliceIds.slice(0, 100),
    );
  });

  it('answers BAD_USER_INPUT for first/last above 100 (any size, literal or variable) and 101 ids, without calling upstream', async () => {
    const gateway = await gatewayWith();
    const cases: Array<{ query: string; variables?: Record<string, unknown> }> = [
      { query: '{ conversations(first: 101) { edges { node { id } } } }' },
      { query: '{ conversations(first: 100000) { edges { node { id } } } }' },
      { query: '{ conversations(last: 100000) { edges { node { id } } } }' },
      {
        query: 'query P($f: Int) { conversations(first: $f) { edges { node { id } } } }',
        variables: { f: 101 },
      },
      {
        query: 'query P($f: Int) { conversations(first: $f) { edges { node { id } } } }',
        variables: { f: 100000 },
      },
      {
        query: 'query N($ids: [ID!]!) { nodes(ids: $ids) { id } }',
        variables: { ids: [...aliceIds.slice(0, 100), aliceIds[0]] },
      },
      { query: `{ nodes(ids: [${Array.from({ length: 101 }, (_, i) => `"${i}"`).join(',')}]) { id } }` },
    ];
    for (const request of cases) {
      const answer = await post(gateway.url, request, { 'x-session-api-key': ALICE });
      expect({ status: answer.status, codes: codes(answer) }, request.query).toEqual({
        status: 400,
        codes: ['BAD_USER_INPUT'],
      });
      expect(answer.json?.errors?.[0]?.message).toMatch(/at most 100|between 1 and 100/);
    }
    expect(gateway.calls).toHaveLength(0);
  });
});

describe('upstream-call budget', () => {
  it('refuses an operation whose upstream calls could exceed the bound before any upstream call (HTTP and graphql-ws)', async () => {
    const gateway = await gatewayWith({
      upstreamUrl: '',
      hardening: { queryLimits: { maxUpstreamCalls: 150 } },
    });
    const twoFull = {
      query: 'query Two($ids: [ID!]!) { a: nodes(ids: $ids) { id } b: nodes(ids: $ids) { id } }',
      variables: { ids: aliceIds.slice(0, 100) },
    };
    const refused = await post(gateway.url, twoFull, { 'x-session-api-key': ALICE });
    expect(refused.status).toBe(400);
    expect(refused.json?.data ?? null).toBeNull();
    expect(refused.json?.errors?.[0]).toEqual({
      message: 'Query could make 200 calls to the conversation service; the limit is 150 per operation.',
      extensions: { code: 'QUERY_LIMIT_EXCEEDED', limit: 'UPSTREAM_CALLS' },
    });

    const ws = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': ALICE } });
    const overWs = new Collector(ws.iterate(twoFull));
    await overWs.finished();
    expect(JSON.stringify([overWs.items, overWs.error])).toContain('QUERY_LIMIT_EXCEEDED');
    expect(gateway.calls).toHaveLength(0);

    // One full nodes() plus a list stays within the bound and runs.
    const allowed = await post(
      gateway.url,
      {
        query:
          'query One($ids: [ID!]!) { nodes(ids: $ids) { id } conversations(first: 5) { edges { cursor } } }',
        variables: { ids: aliceIds.slice(0, 100) },
      },
      { 'x-session-api-key': ALICE },
    );
    expect(allowed.json?.errors).toBeUndefined();
    expect(gateway.calls.length).toBeGreaterThan(0);
    expect(gateway.calls.length).toBeLessThanOrEqual(150);
  });
});

/**
 * A dispatcher that counts, per session key, the upstream requests waiting for their answer: from
 * `dispatch` until undici reports the answer's end or an error to the client's handler.
 */
function countingDispatcher(origin: string) {
  const pool = new Pool(origin, { connections: 64 });
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const dispatcher = {
    dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
      const key = String(
        (options.headers as Record<string, string> | undefined)?.['x-session-api-key'] ?? '',
      );
      const now = (inFlight.get(key) ?? 0) + 1;
      inFlight.set(key, now);
      peak.set(key, Math.max(peak.get(key) ?? 0, now));
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
      };
      return pool.dispatch(options, {
        onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
        onResponseStart: (controller, status, headers, message) =>
          handler.onResponseStart?.(controller, status, headers, message),
        onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
        onResponseEnd: (controller, trailers) => {
          finish();
          handler.onResponseEnd?.(controller, trailers);
        },
        onResponseError: (controller, error) => {
          finish();
          handler.onResponseError?.(controller, error);
        },
      });
    },
    close: () => pool.close(),
  };
  return { dispatcher: dispatcher as unknown as Dispatcher, peak, close: () => pool.close() };
}

describe('per-credential upstream concurrency', () => {
  const lookups = (ids: string[]) => ({
    query: 'query Many($ids: [ID!]!) { nodes(ids: $ids) { id } }',
    variables: { ids },
  });

  it('holds each credential to its share while other credentials run beside it', async () => {
    const counting = countingDispatcher(service.url);
    onTestFinished(() => counting.close());
    const gateway = await gatewayWith({
      upstreamUrl: '',
      upstream: { dispatcher: counting.dispatcher, concurrencyPerCredential: 3 },
    });
    const [alice, bob] = await Promise.all([
      post(gateway.url, lookups(aliceIds.slice(0, 60)), { 'x-session-api-key': ALICE }),
      post(gateway.url, lookups(aliceIds.slice(60, 100)), { 'x-session-api-key': BOB }),
    ]);
    expect(alice.json?.errors).toBeUndefined();
    expect(alice.json?.data?.nodes).toHaveLength(60);
    // Bob's lookups of Alice's conversations answer null (tenant isolation), but they were made.
    expect(bob.json?.errors).toBeUndefined();
    expect(gateway.countCalls('GET', '/api/conversations/')).toBe(100);
    expect(counting.peak.get(ALICE)).toBeLessThanOrEqual(3);
    expect(counting.peak.get(BOB)).toBeLessThanOrEqual(3);
    expect(counting.peak.get(ALICE)).toBeGreaterThanOrEqual(2);
  });

  it('without the bound (0) one operation fans out far wider (the control for the test above)', async () => {
    const counting = countingDispatcher(service.url);
    onTestFinished(() => counting.close());
    const gateway = await gatewayWith({
      upstreamUrl: '',
      upstream: { dispatcher: counting.dispatcher, concurrencyPerCredential: 0 },
    });
    const alice = await post(gateway.url, lookups(aliceIds.slice(0, 60)), { 'x-session-api-key': ALICE });
    expect(alice.json?.errors).toBeUndefined();
    expect(counting.peak.get(ALICE)).toBeGreaterThan(3);
  });
});

describe('fair share of a slow upstream (scripted double holding every lookup until released)', () => {
  /**
   * Tenant A fans out 20 lookups through a pool of 4; once A's calls are waiting, tenant B asks for
   * one. The double records the order calls arrive in: with the per-credential bound (2), B's call
   * reaches the upstream while A's are still held; without it, B's call waits behind all of A's.
   */
  async function arrivalOfB(concurrencyPerCredential: number) {
    const held: Array<() => void> = [];
    const upstream = await misbehavingUpstreamForTest((_req, res) =>
      held.push(() => sendJson(res, 200, null)),
    );
    const gateway = await gatewayWith({
      upstreamUrl: upstream.url,
      upstreamConnections: 4,
      upstream: { concurrencyPerCredential },
    });
    const ids = Array.from({ length: 20 }, (_, i) =>
      encodeGlobalId('Conversation', i.toString(16).padStart(32, '0')),
    );
    const a = post(
      gateway.url,
      { query: 'query A($ids: [ID!]!) { nodes(ids: $ids) { id } }', variables: { ids } },
      {
        'x-session-api-key': ALICE,
      },
    );
    // Only the two tenants' calls are counted: in a full run a stray call of another test's gateway
    // (to a port of its closed upstream, given again to this double) once arrived among them.
    const keyOf = (request: (typeof upstream.requests)[number]) => request.headers['x-session-api-key'];
    const callsOfA = () => upstream.requests.filter((request) => keyOf(request) === ALICE).length;
    await vi.waitFor(
      () => expect(callsOfA()).toBeGreaterThanOrEqual(Math.min(4, concurrencyPerCredential || 4)),
      { timeout: 5000, interval: 20 },
    );
    const inFlightOfA = callsOfA();
    const b = post(
      gateway.url,
      { query: `{ node(id: "${encodeGlobalId('Conversation', 'f'.repeat(32))}") { id } }` },
      {
        'x-session-api-key': BOB,
      },
    );
    let done = false;
    const both = Promise.all([a, b]).finally(() => {
      done = true;
    });
    // Answer whatever is held, a batch at a time, until both operations are done.
    while (!done) {
      for (const release of held.splice(0)) release();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const [answerA, answerB] = await both;
    expect(answerA.json?.errors).toBeUndefined();
    expect(answerB.json?.data).toEqual({ node: null });
    const order = upstream.requests.map(keyOf).filter((key) => key === ALICE || key === BOB);
    expect(order.filter((key) => key === ALICE)).toHaveLength(20);
    return { inFlightOfA, arrivalOfB: order.indexOf(BOB) };
  }

  it("lets another tenant's call through while one tenant's calls wait for its share", async () => {
    const bounded = await arrivalOfB(2);
    expect(bounded).toEqual({ inFlightOfA: 2, arrivalOfB: 2 });
  });

  it('without the bound, the other tenant waits behind every queued call (the control)', async () => {
    const unbounded = await arrivalOfB(0);
    expect(unbounded).toEqual({ inFlightOfA: 4, arrivalOfB: 20 });
  });
});

describe('upstream failures in the log', () => {
  it('writes one operation line and not one line per failed upstream call', async () => {
    // Nothing listens on this port: every lookup fails (refused, then the circuit opens).
    const gateway = await gatewayWith({ upstreamUrl: 'http://127.0.0.1:9' });
    const answer = await post(gateway.url, lookups100(), { 'x-session-api-key': ALICE });
    expect(answer.status).toBe(200);
    expect(new Set(codes(answer))).toEqual(new Set(['UPSTREAM_UNAVAILABLE']));
    // 100 lookups, each failing (the first ones refused, then the open circuit refuses the rest).
    expect(gateway.countCalls('GET', '/api/conversations/')).toBeGreaterThan(0);
    await gateway.close();
    const lines = gateway.logs().map((line) => JSON.parse(line) as Record<string, unknown>);
    const perCall = lines.filter((line) => line.msg === 'upstream call failed');
    const summaries = lines.filter((line) => line.msg === 'more upstream calls failed');
    const operations = lines.filter((line) => line.msg === 'operation');
    expect(operations).toHaveLength(1);
    // Every failure is accounted for, in a line per second at most (the operation takes well under
    // a second; the bound below leaves room for a slow machine) instead of 100 lines.
    const summarised = summaries.reduce(
      (sum, line) => sum + ((line.upstreamFailures as { count: number }).count ?? 0),
      0,
    );
    expect(perCall.length + summarised).toBe(100);
    expect(perCall.length).toBeLessThanOrEqual(3);
    expect(summaries.length).toBeLessThanOrEqual(3);
  });

  function lookups100() {
    return {
      query: 'query Many($ids: [ID!]!) { nodes(ids: $ids) { id } }',
      variables: { ids: aliceIds.slice(0, 100) },
    };
  }
});
