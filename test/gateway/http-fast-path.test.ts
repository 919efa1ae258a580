/**
 * The HTTP fast path (src/gateway/http/http-fast-path.ts) answers the common JSON POST exactly as Yoga's
 * pipeline does. Each request is sent twice to one real gateway: once as is (fast path) and once with
 * the gateway's own `Origin` (allowed, and always left to Yoga); status, media type and body must be
 * the same. Which path answered is read from Yoga's own debug line ("Parsing request to extract GraphQL parameters"),
 * which only its pipeline writes: the fast path must be taken for runnable operations, and refused
 * bodies must reach Yoga (so every refusal keeps Yoga's exact answer).
 */
import { describe, expect, it } from 'vitest';
import { acceptedJsonMediaType } from '../../src/gateway/http/http-fast-path.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { localServiceForTest, rest } from '../helpers/local-service.ts';

const LIST =
  'query List { conversations(first: 3) { edges { cursor node { id title status createdAt } } pageInfo { hasNextPage endCursor } } }';
const APOLLO_ACCEPT = 'application/graphql-response+json,application/json;q=0.9';
const URQL_ACCEPT =
  'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed';

interface Case {
  name: string;
  /** Raw body text (so malformed and batched bodies can be sent). */
  body: string;
  headers?: Record<string, string>;
  /** Which path answers it when sent without an Origin. */
  path: 'fast' | 'yoga';
}

const json = (value: unknown) => JSON.stringify(value);
/** A document whose `$n: Int` gets a string. */
const BAD_VARIABLE = json({
  query: 'query($n: Int) { conversations(first: $n) { edges { cursor } } }',
  variables: { n: 'x' },
});

const CASES: Case[] = [
  { name: 'list, no Accept', body: json({ query: LIST }), path: 'fast' },
  {
    name: 'list, application/json',
    body: json({ query: LIST }),
    headers: { accept: 'application/json' },
    path: 'fast',
  },
  {
    name: 'list, graphql-response+json',
    body: json({ query: LIST }),
    headers: { accept: 'application/graphql-response+json' },
    path: 'fast',
  },
  {
    name: "list, Apollo's Accept",
    body: json({ query: LIST }),
    headers: { accept: APOLLO_ACCEPT },
    path: 'fast',
  },
  {
    name: "list, urql's Accept",
    body: json({ query: LIST }),
    headers: { accept: URQL_ACCEPT },
    path: 'fast',
  },
  { name: 'list, */*', body: json({ query: LIST }), headers: { accept: '*/*' }, path: 'fast' },
  {
    name: 'charset in content type',
    body: json({ query: LIST }),
    headers: { 'content-type': 'application/json; charset=utf-8' },
    path: 'fast',
  },
  {
    name: 'operationName picks one of two',
    body: json({ query: `${LIST} query Other { __typename }`, operationName: 'Other' }),
    path: 'fast',
  },
  {
    name: 'a variable that does not coerce (graphql-response+json: 400)',
    body: BAD_VARIABLE,
    headers: { accept: 'application/graphql-response+json' },
    path: 'fast',
  },
  {
    name: 'a variable that does not coerce (application/json: 200)',
    body: BAD_VARIABLE,
    headers: { accept: 'application/json' },
    path: 'fast',
  },
  {
    name: 'a page size past the budget, thrown from execute',
    body: json({ query: '{ conversations(first: 101) { edges { cursor } } }' }),
    headers: { accept: 'application/graphql-response+json' },
    path: 'fast',
  },
  {
    name: 'a malformed id (field error)',
    body: json({ query: '{ node(id: "nope") { id } }' }),
    path: 'fast',
  },
  {
    name: 'a malformed Authorization (401)',
    body: json({ query: LIST }),
    headers: { authorization: 'Basic abc' },
    path: 'fast',
  },
  { name: 'a syntax error', body: json({ query: '{ conversations(' }), path: 'yoga' },
  { name: 'a validation error', body: json({ query: '{ nope }' }), path: 'yoga' },
  {
    name: 'an alias limit (thrown from validate)',
    body: json({
      query: `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: conversations(first: 1) { pageInfo { hasNextPage } }`).join(' ')} }`,
    }),
    path: 'yoga',
  },
  { name: 'an unknown parameter', body: json({ query: LIST, foo: 1 }), path: 'yoga' },
  { name: 'a batch', body: json([{ query: LIST }]), path: 'yoga' },
  { name: 'not JSON', body: '{"query":', path: 'yoga' },
  {
    name: 'APQ extensions',
    body: json({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } }),
    path: 'yoga',
  },
  {
    name: 'a subscription over POST with JSON Accept',
    body: json({ query: 'subscription { __typename }' }),
    path: 'yoga',
  },
];

describe('the HTTP fast path', () => {
  it('answers like Yoga, and answers only what it can answer exactly', async () => {
    const service = await localServiceForTest({ sessionApiKeys: ['k'] });
    for (let i = 0; i < 4; i++)
      await rest(service.url, '/api/conversations', { method: 'POST', body: {}, key: 'k' });
    await using gateway = await startTestGateway({
      upstreamUrl: service.url,
      hardening: { rateLimit: false },
    });
    const origin = new URL(gateway.url).origin;
    const yogaLines = () =>
      gateway.logs().filter((line) => line.includes('Parsing request to extract GraphQL parameters')).length;

    const send = async (testCase: Case, viaYoga: boolean) => {
      const before = yogaLines();
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-session-api-key': 'k',
          ...testCase.headers,
          ...(viaYoga ? { origin } : {}),
        },
        body: testCase.body,
      });
      const answer = {
        status: response.status,
        type: response.headers.get('content-type'),
        length: response.headers.get('content-length'),
        body: await response.text(),
      };
      return { answer, path: yogaLines() > before ? 'yoga' : 'fast' };
    };

    for (const testCase of CASES) {
      const fast = await send(testCase, false);
      const yoga = await send(testCase, true);
      expect(yoga.path, `${testCase.name}: the Origin request goes through Yoga`).toBe('yoga');
      expect(fast.path, testCase.name).toBe(testCase.path);
      expect(fast.answer, testCase.name).toEqual(yoga.answer);
    }
  });

  it('picks the media type Yoga picks (first JSON entry of Accept, q ignored, other charsets skipped)', () => {
    expect(acceptedJsonMediaType(undefined)).toBe('application/json');
    expect(acceptedJsonMediaType(APOLLO_ACCEPT)).toBe('application/graphql-response+json');
    expect(acceptedJsonMediaType(URQL_ACCEPT)).toBe('application/graphql-response+json');
    expect(acceptedJsonMediaType('application/json;q=0.1, application/graphql-response+json')).toBe(
      'application/json',
    );
    expect(acceptedJsonMediaType('application/*')).toBe('application/json');
    expect(acceptedJsonMediaType('application/json; charset=latin1, application/graphql-response+json')).toBe(
      'application/graphql-response+json',
    );
    expect(acceptedJsonMediaType('text/event-stream')).toBeNull();
    expect(acceptedJsonMediaType('text/html')).toBeNull();
  });

  it('answers each Accept for itself when requests alternate between them (the last answer is kept)', () => {
    const headers = [APOLLO_ACCEPT, undefined, 'text/html', 'text/html', APOLLO_ACCEPT, '*/*', APOLLO_ACCEPT];
    expect(headers.map(acceptedJsonMediaType)).toEqual([
      'application/graphql-response+json',
      'application/json',
      null,
      null,
      'application/graphql-response+json',
      'application/json',
      'application/graphql-response+json',
    ]);
  });
});
