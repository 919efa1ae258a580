/**
 * The differential test of prepared operations (src/gateway/compiled/prepared-operations.ts): a query
 * or mutation whose text the HTTP fast path has seen runs without envelop, and must answer and be
 * observed exactly as envelop's pipeline answers and observes it. Each request goes three times to one
 * real gateway: twice as is (the first prepares the text, the second runs prepared) and once with the
 * gateway's own `Origin` (always Yoga's whole pipeline). Status, media type, length, Retry-After and
 * body must be the same, and so must the operation's log line (its duration aside): the observers run
 * in both. The cases reach every part the prepared path runs: each guard's refusal, a context that
 * throws, field errors, suggestions hidden, errors masked, an upstream that fails.
 */
import { useGraphQlJit } from '@envelop/graphql-jit';
import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import { createYoga, processRegularResult } from 'graphql-yoga';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { describe, expect, it } from 'vitest';
import { PreparedOperations } from '../../src/gateway/compiled/prepared-operations.ts';
import {
  flushEndedOperations,
  OperationObservers,
} from '../../src/gateway/observability/operation-observer.ts';
import { RateLimiter } from '../../src/gateway/protection/rate-limit.ts';
import { resultsAsYogaMasksThem } from '../../src/gateway/websocket/live-fan-out.ts';
import type { GatewayContext } from '../../src/schema/context.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';
import { misbehavingUpstreamForTest } from '../helpers/misbehaving-upstream.ts';

interface Request {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  headers?: Record<string, string>;
  /** No operation line on either path: the context is built before the operation starts. */
  unobserved?: true;
}

const LIST =
  'query List { conversations(first: 3) { edges { cursor node { id title status createdAt } } pageInfo { hasNextPage endCursor } } }';

/** What the client sees of an answer, and the operation's log line without its timing. */
interface Observed {
  status: number;
  type: string | null;
  length: string | null;
  retryAfter: string | null;
  body: string;
  logLine: Record<string, unknown> | undefined;
}

/** Sends `request` to the gateway: as is (the fast path) or with its own Origin (Yoga's pipeline). */
async function send(gateway: TestGateway, request: Request, viaYoga: boolean): Promise<Observed> {
  const logsBefore = gateway.logs().length;
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-session-api-key': 'k',
      accept: 'application/graphql-response+json',
      ...request.headers,
      ...(viaYoga ? { origin: new URL(gateway.url).origin } : {}),
    },
    body: JSON.stringify({
      query: request.query,
      variables: request.variables,
      operationName: request.operationName,
    }),
  });
  const body = await response.text();
  const lines = gateway
    .logs()
    .slice(logsBefore)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === 'operation');
  const { time: _time, durationMs: _durationMs, ...logLine } = lines.at(-1) ?? {};
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    length: response.headers.get('content-length'),
    retryAfter: response.headers.get('retry-after'),
    body,
    logLine: lines.length ? logLine : undefined,
  };
}

/** Sends each request prepared and through Yoga; both must be observed alike, and the text prepared. */
async function expectAlike(gateway: TestGateway, requests: Request[]): Promise<Observed[]> {
  const seen: Observed[] = [];
  for (const request of requests) {
    await send(gateway, request, false);
    const prepared = await send(gateway, request, false);
    const viaYoga = await send(gateway, request, true);
    expect(
      gateway.gateway.preparedOperations.get(request.query, request.operationName),
      `${request.name}: prepared`,
    ).toBeTruthy();
    expect(prepared, request.name).toEqual(viaYoga);
    if (!request.unobserved) expect(prepared.logLine, `${request.name}: logged`).toBeDefined();
    seen.push(prepared);
  }
  return seen;
}

describe('prepared operations', () => {
  it('answer and log as envelop does: data, field errors, each refusal, a failing context, hidden suggestions', async () => {
    const service = await localServiceForTest({ sessionApiKeys: ['k'] });
    for (let i = 0; i < 3; i++)
      await rest(service.url, '/api/conversations', { method: 'POST', body: {}, key: 'k' });
    await using gateway = await startTestGateway({
      upstreamUrl: service.url,
      hardening: { rateLimit: false, fieldSuggestions: false },
    });
    const answers = await expectAlike(gateway, [
      { name: 'a list', query: LIST },
      {
        name: 'one of two operations, with variables',
        query: `query Page($n: Int) { conversations(first: $n) { edges { node { title } } } } ${LIST}`,
        operationName: 'Page',
        variables: { n: 2 },
      },
      {
        name: 'a variable that does not coerce, near an enum value (suggestion hidden)',
        query: 'query($t: ConversationTrigger) { conversations(first: 1, trigger: $t) { edges { cursor } } }',
        variables: { t: 'GUl' },
      },
      {
        name: 'over the budget (refused before anything runs)',
        query: '{ conversations(first: 101) { edges { cursor } } }',
      },
      { name: 'a malformed id (field error)', query: '{ node(id: "nope") { id } }' },
      {
        name: 'a conversation the upstream does not know',
        query: '{ conversation(id: "0123456789abcdef0123456789abcdef") { id title } }',
      },
      {
        name: 'a mutation answered with a schema error',
        query:
          'mutation { renameConversation(input: { conversationId: "0123456789abcdef0123456789abcdef", title: "x" }) { __typename ... on ConversationNotFoundError { message } } }',
      },
      {
        name: 'a malformed Authorization (context throws)',
        query: LIST,
        headers: { authorization: 'Basic abc', 'x-session-api-key': '' },
        unobserved: true,
      },
    ]);
    // The cases reach what they say: data, a coded refusal without a suggestion, a field error.
    expect(JSON.parse(answers[0]?.body ?? '').data.conversations.edges).toHaveLength(3);
    expect(answers[2]?.body).toContain('BAD_USER_INPUT');
    expect(answers[2]?.body).not.toContain('Did you mean');
    expect(answers[3]?.body).toContain('BAD_USER_INPUT');
    expect(answers[3]?.logLine).toMatchObject({ outcome: 'error' });
    expect(answers[4]?.logLine).toMatchObject({ outcome: 'error' });
    expect(answers[7]?.status).toBe(401);
  });

  it('answer a rate-limited operation as envelop does (429 and Retry-After)', async () => {
    const service = await localServiceForTest({ sessionApiKeys: ['k'] });
    const refusing = new RateLimiter({
      perSecond: 1,
      backend: { consume: async () => Promise.reject(new RateLimiterRes(0, 2500, 3, false)) },
    });
    await using gateway = await startTestGateway({
      upstreamUrl: service.url,
      hardening: { rateLimit: refusing },
    });
    const [answer] = await expectAlike(gateway, [{ name: 'rate limited', query: LIST }]);
    expect(answer).toMatchObject({ status: 429, retryAfter: '3' });
    expect(answer?.body).toContain('RATE_LIMITED');
  });

  it('answer and log as envelop does when the upstream fails (HTML 500s, masked or coded)', async () => {
    const upstream = await misbehavingUpstreamForTest((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' }).end('<html>broken</html>');
    });
    await using gateway = await startTestGateway({
      upstreamUrl: upstream.url,
      hardening: { rateLimit: false },
      upstream: { retries: 0 },
    });
    const [answer] = await expectAlike(gateway, [{ name: 'a list the upstream fails', query: LIST }]);
    expect(answer?.body).toContain('UPSTREAM_');
    expect(answer?.body).not.toContain('broken');
  });

  it('mask an unexpected error as Yoga does, after the observers saw it as it was', async () => {
    // No resolver of the gateway's schema throws a plain Error on purpose: a schema of two fields does.
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: {
          fine: { type: GraphQLString, resolve: () => 'ok' },
          boom: {
            type: GraphQLString,
            resolve: () => {
              throw new Error('an internal detail');
            },
          },
        },
      }),
    });
    const observed: string[] = [];
    const masked: unknown[] = [];
    const operations = new PreparedOperations({
      schema,
      guards: [],
      observers: new OperationObservers([
        {
          name: 'test',
          start: () => ({
            ended: (errors) => observed.push(...errors.map((error) => (error as Error).message)),
          }),
        },
      ]),
      compiledPlans: { mode: 'off', withSession: (context) => context },
      context: () => ({}) as GatewayContext,
      hideSuggestions: false,
      maskResult: resultsAsYogaMasksThem({ hideSuggestions: false, onMasked: (error) => masked.push(error) }),
    });
    const query = '{ fine boom }';
    const operation = operations.prepare(query, undefined, parse(query));
    if (!operation) throw new Error('not prepared');
    const prepared = await operations.run(operation, {
      request: {
        headers: new Headers(),
        signal: new AbortController().signal,
        url: 'http://localhost/graphql',
      },
      params: {},
    });

    const yoga = createYoga({ schema, maskedErrors: true, logging: false, plugins: [useGraphQlJit()] });
    const response = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    // The fast path answers a result with errors through Yoga's own processor (http-fast-path.ts).
    const answered = await processRegularResult(prepared, yoga.fetchAPI, 'application/json');
    expect(await answered.text()).toBe(await response.text());
    expect(prepared.errors?.[0]?.message).toBe('Unexpected error.');
    // Told of the end in a batch (now): the errors it is told are still the ones the operation met.
    flushEndedOperations();
    expect(observed).toEqual(['an internal detail']);
    expect(masked).toHaveLength(1);
  });

  it('keep a text in use prepared while a caller sends thousands of others', () => {
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: { fine: { type: GraphQLString, resolve: () => 'ok' } },
      }),
    });
    const operations = new PreparedOperations({
      schema,
      guards: [],
      observers: new OperationObservers([]),
      compiledPlans: { mode: 'off', withSession: (context) => context },
      context: () => ({}) as GatewayContext,
      hideSuggestions: false,
      maskResult: (result) => result,
      maxEntries: 10,
    });
    const prepare = (query: string) => operations.prepare(query, undefined, parse(query));
    const inUse = prepare('query InUse { fine }');
    const idle = prepare('query Idle { fine }');
    // Another caller's distinct texts, 5 generations' worth; the text in use is asked for now and then.
    for (let index = 0; index < 50; index++) {
      prepare(`query Other${index} { fine }`);
      if (index % 7 === 0) expect(operations.get('query InUse { fine }', undefined)).toBe(inUse);
    }
    expect(operations.get('query InUse { fine }', undefined)).toBe(inUse);
    // Not used since: dropped with its generation, and prepared anew (another object) on its next sight.
    expect(operations.get('query Idle { fine }', undefined)).toBeUndefined();
    expect(prepare('query Idle { fine }')).not.toBe(idle);
    // Two generations at most.
    expect(operations.size).toBeLessThanOrEqual(20);
  });
});
