/**
 * Request limits on the real gateway in front of the real local service: graphql-armor limits with
 * coded errors (and no upstream call), body size, CSRF, CORS, introspection and suggestions switches,
 * and the persisted-operations allow-list over HTTP and graphql-ws.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { PersistedOperations, sha256 } from '../../src/gateway/protection/limits.ts';
import { Collector } from '../helpers/collector.ts';
import { serviceAndGatewayForTest, type TestGatewayOptions } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { codes, post } from '../helpers/http.ts';

const setup = (hardening: TestGatewayOptions['hardening'] = {}) => serviceAndGatewayForTest({ hardening });

const LIST = 'query List { conversations(first: 2) { edges { node { id title } } } }';

// Each limit's refusal is checked in-process (test/gateway/in-process.test.ts); here the defaults on
// the real gateway in front of the real service.
describe('query limits (graphql-armor)', () => {
  it('the defaults let the schema tour operations through', async () => {
    const { gateway } = await setup();
    const tour = `query RecentConversations($after: String) {
      conversations(first: 20, after: $after) {
        edges { cursor node { id conversationId title status statusRaw runtimeStatus runtimeStatusRaw trigger triggerRaw
          gitProvider gitProviderRaw selectedRepository selectedBranch numConnections url sessionApiKey createdAt lastUpdatedAt prNumbers } }
        pageInfo { hasNextPage endCursor }
      }
      node(id: "Q29udmVyc2F0aW9uOjBhMWIyYzNkNGU1ZjYwNzE4MjkzYTRiNWM2ZDdlOGY5") { id ... on Conversation { title } }
    }`;
    const answer = await post(gateway.url, { query: tour });
    expect(answer.status).toBe(200);
    expect(answer.json?.errors).toBeUndefined();
  });
});

describe('HTTP request limits', () => {
  it('answers 413 PAYLOAD_TOO_LARGE above the body limit and 411 for a body without a length', async () => {
    const { gateway } = await setup({ maxBodyBytes: 2048 });
    const big = await post(gateway.url, { query: LIST, variables: { pad: 'x'.repeat(4096) } });
    expect(big.status).toBe(413);
    expect(codes(big)).toEqual(['PAYLOAD_TOO_LARGE']);

    const chunks = [new TextEncoder().encode(JSON.stringify({ query: LIST }))];
    const chunked = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(411);
    expect(
      ((await chunked.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions
        .code,
    ).toBe('LENGTH_REQUIRED');
    expect(gateway.calls).toHaveLength(0);
  });

  it('refuses cross-site "simple" POSTs (CSRF) unless a preflight-forcing header is present', async () => {
    const { gateway } = await setup();
    const form = `query=${encodeURIComponent('mutation { unsetProviderTokens { statusMessage } }')}`;
    const refused = await post(gateway.url, form, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(refused.status).toBe(403);
    expect(codes(refused)).toEqual(['CSRF_REJECTED']);
    const text = await post(gateway.url, JSON.stringify({ query: LIST }), { 'content-type': 'text/plain' });
    expect(text.status).toBe(403);
    expect(gateway.calls).toHaveLength(0);
    // With the header, the request is no longer a simple one; it gets Yoga's ordinary handling.
    const withHeader = await post(gateway.url, form, {
      'content-type': 'application/x-www-form-urlencoded',
      'graphql-preflight': '1',
    });
    expect(withHeader.status).not.toBe(403);
    // JSON, the normal case, is untouched.
    expect((await post(gateway.url, { query: LIST })).status).toBe(200);
  });

  it('sends no CORS headers by default and exactly the configured origins otherwise', async () => {
    const plain = await setup();
    const preflight = (url: string, origin: string) =>
      fetch(url, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
    const none = await preflight(plain.gateway.url, 'https://app.example.com');
    expect(none.headers.get('access-control-allow-origin')).toBeNull();

    const allowed = await setup({ corsOrigins: ['https://app.example.com'] });
    const ok = await preflight(allowed.gateway.url, 'https://app.example.com');
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(ok.headers.get('access-control-allow-headers')).toContain('x-session-api-key');
    const other = await preflight(allowed.gateway.url, 'https://evil.example.net');
    expect(other.headers.get('access-control-allow-origin')).not.toBe('https://evil.example.net');
  });
});

describe('production switches', () => {
  it('introspection off refuses __schema but keeps __typename; suggestions off hides "Did you mean"', async () => {
    const open = await setup();
    const typo = '{ conversatoins { edges { cursor } } }';
    expect((await post(open.gateway.url, { query: typo })).text).toContain('Did you mean');

    const { gateway } = await setup({ introspection: false, fieldSuggestions: false });
    const introspection = await post(gateway.url, { query: '{ __schema { types { name } } }' });
    expect(introspection.status).toBe(400);
    expect(introspection.text).toContain('introspection');
    expect(introspection.json?.data ?? null).toBeNull();
    const typename = await post(gateway.url, { query: '{ __typename }' });
    expect(typename.json?.data).toEqual({ __typename: 'Query' });
    const hidden = await post(gateway.url, { query: typo });
    expect(hidden.status).toBe(400);
    expect(hidden.text).not.toContain('Did you mean');
    expect(hidden.text).not.toContain('conversations');
  });
});

describe('persisted operations (allow-list)', () => {
  it('runs listed operations by hash and refuses anything else, over HTTP and graphql-ws', async () => {
    const hash = sha256(LIST);
    const { gateway } = await setup({ persistedOperations: new PersistedOperations({ [hash]: LIST }) });
    const byHash = await post(gateway.url, {
      extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
    });
    expect(byHash.status).toBe(200);
    expect(byHash.json?.data).toEqual({ conversations: { edges: [] } });

    const arbitrary = await post(gateway.url, { query: LIST });
    expect(codes(arbitrary)).toEqual(['PERSISTED_QUERY_ONLY']);
    const unknown = await post(gateway.url, {
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ __typename }') } },
    });
    expect(codes(unknown)).toEqual(['PERSISTED_QUERY_NOT_IN_LIST']);

    const ws = wsClient(gateway.url);
    const refused = new Collector(ws.iterate({ query: LIST }));
    await refused.finished();
    // graphql-ws delivers a refused subscribe as an `error` message: the iterator throws it.
    expect(refused.items).toEqual([]);
    expect(refused.error).toEqual([
      expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_ONLY' } }),
    ]);
    const allowed = new Collector(
      ws.iterate({ query: '', extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }),
    );
    await allowed.finished();
    expect(allowed.items).toEqual([{ data: { conversations: { edges: [] } } }]);
  });

  it("refuses an allow-list file whose keys are not the documents' hashes", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'persisted-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ [sha256(LIST)]: LIST }));
    expect(PersistedOperations.fromFile(good).size).toBe(1);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ deadbeef: LIST }));
    expect(() => PersistedOperations.fromFile(bad)).toThrow(/not the sha256/);
  });
});
