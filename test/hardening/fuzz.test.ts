/**
 * Fuzzing with fast-check against the real gateway and the real local service (loopback): thousands of
 * random and malformed operations, variables, JSON bodies, headers and graphql-ws messages. The
 * gateway never answers 5xx for a client mistake, never crashes or closes a socket as an internal
 * error, and never returns or logs the session key that is in play. Runs are seeded by fast-check and
 * bounded (the whole file takes seconds).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { post } from '../helpers/http.ts';
import { startTestLocalService, type TestLocalService } from '../helpers/local-service.ts';

const SECRET = 'sk-fuzz-secret-key-9f8e7d6c5b4a';
let service: TestLocalService;
let gateway: TestGateway;
let conversationId = '';

beforeAll(async () => {
  service = await startTestLocalService({ sessionApiKeys: [SECRET] });
  gateway = await startTestGateway({
    upstreamUrl: service.url,
    // The fuzzer is one caller going as fast as it can; the limiter is tested on its own elsewhere.
    hardening: { rateLimit: false },
  });
  const created = await post(
    gateway.url,
    {
      query:
        'mutation { createConversation(input: {}) { ... on CreateConversationPayload { conversationId } } }',
    },
    { 'x-session-api-key': SECRET },
  );
  conversationId =
    (created.json?.data?.createConversation as { conversationId?: string } | undefined)?.conversationId ?? '';
  if (!conversationId) throw new Error(`setup failed: ${created.text}`);
});
afterAll(async () => {
  await gateway?.close();
  await service?.close();
});

/** Field names of the schema and near misses, argument names and values, to build plausible documents. */
const FIELDS = [
  'conversations',
  'conversation',
  'node',
  'nodes',
  'edges',
  'node',
  'pageInfo',
  'hasNextPage',
  'endCursor',
  'id',
  'conversationId',
  'title',
  'status',
  'statusRaw',
  'createdAt',
  'sessionApiKey',
  'url',
  '__typename',
  '__schema',
  'types',
  'name',
  'conversatoins',
  'createConversation',
  'sendMessage',
  'unsetProviderTokens',
  'conversationEvents',
];
const ARG_NAMES = [
  'first',
  'after',
  'last',
  'before',
  'id',
  'ids',
  'input',
  'trigger',
  'repository',
  'conversationId',
];

const argValue: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.constantFrom(
    'true',
    'null',
    'GUI',
    'UNKNOWN',
    '$v',
    '$first',
    '[]',
    '{}',
    '[1, "x"]',
    `"${'9'.repeat(40)}"`,
  ),
  fc.constant(JSON.stringify('Q29udmVyc2F0aW9uOjBhMWIyYzNk')),
);

const selection: fc.Arbitrary<string> = fc.letrec<{ set: string }>((tie) => ({
  set: fc
    .array(
      fc.tuple(
        fc.option(fc.constantFrom('a', 'b', 'x1'), { nil: undefined }),
        fc.constantFrom(...FIELDS),
        fc.array(fc.tuple(fc.constantFrom(...ARG_NAMES), argValue), { maxLength: 2 }),
        fc.option(tie('set'), { nil: undefined, depthSize: 'small' }),
        fc.option(fc.constantFrom('@skip(if: true)', '@include(if: $v)', '@deprecated', '@nope'), {
          nil: undefined,
        }),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((fields) =>
      fields
        .map(([alias, name, args, sub, directive]) => {
          const argText = args.length ? `(${args.map(([k, v]) => `${k}: ${v}`).join(', ')})` : '';
          return `${alias ? `${alias}: ` : ''}${name}${argText}${directive ? ` ${directive}` : ''}${sub ? ` { ${sub} }` : ''}`;
        })
        .join(' '),
    ),
})).set;

const documentText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('query', 'mutation', 'subscription', ''), selection)
      .map(([op, s]) => `${op} { ${s} }`),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: selection.map((s) => `query Q($v: Boolean, $first: Int) { ${s}`) },
  { weight: 1, arbitrary: fc.constant(`{ conversation(id: "${'x'}") { id } }`) },
);

const variables = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    { v: fc.boolean(), first: fc.oneof(fc.integer(), fc.string(), fc.constant(null)) },
    { requiredKeys: [] },
  ),
);

/** Headers a client might send, wrong or right. The secret is only ever sent as a credential. */
const credentialHeaders = fc.oneof(
  fc.constant({} as Record<string, string>),
  fc.constant({ 'x-session-api-key': SECRET }),
  fc.constant({ authorization: `Bearer ${SECRET}` }),
  fc.constant({ authorization: `Basic ${SECRET}` }),
  fc
    .string({ minLength: 1, maxLength: 40 })
    .map((s) => ({ 'x-session-api-key': s.replace(/[^\x21-\x7e]/g, 'z') })),
  fc.string({ maxLength: 40 }).map((s) => ({ authorization: s.replace(/[^\x20-\x7e]/g, 'z') })),
);
const contentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/graphql-response+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  '',
);

function expectClientSafe(status: number, text: string, context: unknown) {
  expect(status, JSON.stringify(context)).toBeLessThan(500);
  expect(text.includes(SECRET), JSON.stringify(context)).toBe(false);
}

describe('fuzzing', () => {
  it('random operations and variables over HTTP: no 5xx, no secret in answers', async () => {
    await fc.assert(
      fc.asyncProperty(
        documentText,
        variables,
        credentialHeaders,
        fc.boolean(),
        async (query, vars, headers, useConversation) => {
          const body = useConversation
            ? {
                query: 'query One($id: ID!) { conversation(id: $id) { id title } }',
                variables: { id: conversationId },
              }
            : { query, ...(vars === undefined ? {} : { variables: vars }) };
          const answer = await post(gateway.url, body, headers);
          expectClientSafe(answer.status, answer.text, { body, headers });
          // Whatever went wrong, the answer is a GraphQL answer (JSON), not an HTML or stack trace page.
          expect(answer.json, answer.text.slice(0, 200)).toBeDefined();
        },
      ),
      { numRuns: 1000, seed: 20261121 },
    );
  }, 60_000);

  it('malformed bodies, content types, methods and headers: no 5xx, no secret', async () => {
    const rawBody = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      fc
        .record(
          {
            query: fc.jsonValue({ maxDepth: 2 }),
            variables: fc.jsonValue({ maxDepth: 2 }),
            operationName: fc.jsonValue({ maxDepth: 1 }),
            extensions: fc.jsonValue({ maxDepth: 2 }),
          },
          { requiredKeys: [] },
        )
        .map((value) => JSON.stringify(value)),
      fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        rawBody,
        contentTypes,
        credentialHeaders,
        fc.constantFrom(
          '/graphql',
          '/graphql?query=%7B__typename%7D',
          '/graphql?query=%7B',
          '/metrics',
          '/ready',
          '/nope',
          '/graphql?variables=%7B',
        ),
        fc.constantFrom(
          'application/json',
          'application/graphql-response+json',
          'text/event-stream',
          'text/html',
          '*/*',
          '',
        ),
        async (method, body, contentType, headers, path, accept) => {
          const target = new URL(path, gateway.url);
          const init: RequestInit = {
            method,
            headers: {
              ...headers,
              ...(contentType ? { 'content-type': contentType } : {}),
              ...(accept ? { accept } : {}),
            },
          };
          if (method !== 'GET' && method !== 'OPTIONS') init.body = body;
          const abort = AbortSignal.timeout(5000);
          const response = await fetch(target, { ...init, signal: abort });
          const text = accept === 'text/event-stream' ? '' : await response.text();
          if (accept === 'text/event-stream') await response.body?.cancel();
          expectClientSafe(response.status, text, {
            method,
            path,
            contentType,
            accept,
            headers,
            body: body.slice(0, 100),
          });
        },
      ),
      { numRuns: 1000, seed: 4242 },
    );
  }, 60_000);

  it('random graphql-ws messages: no internal-error closes, the gateway keeps serving', async () => {
    const wsUrl = gateway.url.replace(/^http/, 'ws');
    const message = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
      fc
        .record({
          id: fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant(undefined)),
          type: fc.constantFrom(
            'connection_init',
            'subscribe',
            'complete',
            'ping',
            'pong',
            'next',
            'error',
            'bogus',
          ),
          payload: fc.oneof(
            fc.jsonValue({ maxDepth: 2 }),
            documentText.map((query) => ({ query })),
            fc.constant({
              query: `subscription { conversationEvents(conversationId: "${'0'.repeat(32)}") { eventId } }`,
            }),
            // Random payloads carry a key of their own: a ping's payload is echoed in its pong by design.
            fc.constant({ 'X-Session-API-Key': 'some-other-key' }),
          ),
        })
        .map((value) => JSON.stringify(value)),
    );
    const closeCodes = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.array(message, { minLength: 1, maxLength: 6 }),
        async (init, messages) => {
          const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
          const received: string[] = [];
          const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
          socket.on('message', (data) => received.push(String(data)));
          socket.on('error', () => {});
          await new Promise<void>((resolve) => {
            socket.once('open', () => resolve());
            socket.once('close', () => resolve());
          });
          if (socket.readyState === WebSocket.OPEN) {
            if (init)
              socket.send(
                JSON.stringify({ type: 'connection_init', payload: { 'X-Session-API-Key': SECRET } }),
              );
            for (const text of messages) socket.send(text);
            await new Promise((resolve) => setTimeout(resolve, 15));
            socket.close(1000);
          }
          const code = await closed;
          closeCodes.set(code, (closeCodes.get(code) ?? 0) + 1);
          expect(code, messages.join(' | ').slice(0, 300)).not.toBe(4500);
          expect(code).not.toBe(1011);
          for (const text of received) expect(text.includes(SECRET)).toBe(false);
        },
      ),
      { numRuns: 300, seed: 777 },
    );
    // Every kind of refusal happened at least once, so the property exercised them.
    expect([...closeCodes.keys()].some((code) => code >= 4400 && code < 4500)).toBe(true);
    const health = await fetch(new URL('/health', gateway.url));
    expect(health.status).toBe(200);
  }, 60_000);

  it('nothing the fuzzers sent put the secret into the log', () => {
    const logs = gateway.logs();
    expect(logs.length).toBeGreaterThan(100);
    expect(logs.some((line) => line.includes(SECRET))).toBe(false);
  });
});
