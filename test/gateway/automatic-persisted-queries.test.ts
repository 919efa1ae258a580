/**
 * Automatic persisted queries (Apollo's protocol) by hand-made requests on the real gateway in front of
 * the real local service: hash-only misses answer PERSISTED_QUERY_NOT_FOUND, hash + document registers
 * (verified, only once it validated), over GET, POST and graphql-ws; the allow-list still decides alone
 * when configured; the in-memory store is a bounded LRU. Apollo's own link: test/clients/apollo.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { LruQueryStore, sha256Hex } from '../../src/gateway/protection/automatic-persisted-queries.ts';
import { PersistedOperations } from '../../src/gateway/protection/limits.ts';
import { Collector } from '../helpers/collector.ts';
import { serviceAndGatewayForTest, type TestGatewayOptions } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { codes, post, type RawAnswer } from '../helpers/http.ts';

const setup = (hardening: TestGatewayOptions['hardening'] = {}) => serviceAndGatewayForTest({ hardening });

const LIST = 'query List { conversations(first: 2) { edges { node { id title } } } }';
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

/** A GET as Apollo's link sends it with `useGETForHashedQueries`. */
async function get(url: string, params: Record<string, unknown>): Promise<RawAnswer> {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) {
    target.searchParams.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  const response = await fetch(target, { headers: { accept: 'application/json' } });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: JSON.parse(text) };
}

const NOT_FOUND = {
  errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }],
};

describe('automatic persisted queries over HTTP', () => {
  it('a hash-only GET misses with PERSISTED_QUERY_NOT_FOUND (uncacheable), a POST with the document registers it, then the hash alone runs over GET and POST', async () => {
    const { gateway } = await setup();
    const hash = sha256Hex(LIST);

    const miss = await get(gateway.url, { operationName: 'List', extensions: persisted(hash) });
    expect({ status: miss.status, body: miss.json }).toEqual({ status: 200, body: NOT_FOUND });
    expect(miss.headers.get('cache-control')).toBe('private, no-cache, must-revalidate');
    expect(gateway.calls).toHaveLength(0);

    const register = await post(gateway.url, { query: LIST, extensions: persisted(hash) });
    expect(register.status).toBe(200);
    expect(register.json).toEqual({ data: { conversations: { edges: [] } } });

    const hitGet = await get(gateway.url, { operationName: 'List', extensions: persisted(hash) });
    expect({ status: hitGet.status, body: hitGet.json }).toEqual({
      status: 200,
      body: { data: { conversations: { edges: [] } } },
    });
    const hitPost = await post(gateway.url, { extensions: persisted(hash.toUpperCase()) });
    expect(hitPost.json).toEqual({ data: { conversations: { edges: [] } } });
  });

  it('refuses a hash that is not the sha256 of the document, and stores nothing', async () => {
    const { gateway } = await setup();
    const wrong = sha256Hex('{ __typename }');
    const mismatch = await post(gateway.url, { query: LIST, extensions: persisted(wrong) });
    expect({ status: mismatch.status, codes: codes(mismatch) }).toEqual({
      status: 400,
      codes: ['PERSISTED_QUERY_HASH_MISMATCH'],
    });
    expect(gateway.calls).toHaveLength(0);
    for (const hash of [wrong, sha256Hex(LIST)]) {
      const after = await post(gateway.url, { extensions: persisted(hash) });
      expect(codes(after)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    }
  });

  it('does not register a document that fails validation', async () => {
    const { gateway } = await setup();
    const invalid = '{ conversations(first: 2) { noSuchField } }';
    const hash = sha256Hex(invalid);
    const refused = await post(gateway.url, { query: invalid, extensions: persisted(hash) });
    expect(codes(refused)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    const after = await post(gateway.url, { extensions: persisted(hash) });
    expect(codes(after)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
  });

  it('never stores a mutation with a string literal (a secret may be in it), but stores one with variables', async () => {
    const { gateway } = await setup();
    const literal =
      'mutation { addGitProviderToken(input: { provider: GITHUB, token: "ghp_secret" }) { __typename } }';
    const withVariables =
      'mutation Add($input: AddGitProviderTokenInput!) { addGitProviderToken(input: $input) { __typename } }';

    const ran = await post(gateway.url, { query: literal, extensions: persisted(sha256Hex(literal)) });
    expect(ran.json).toEqual({ data: { addGitProviderToken: { __typename: 'AddGitProviderTokenPayload' } } });
    const literalAgain = await post(gateway.url, { extensions: persisted(sha256Hex(literal)) });
    expect(codes(literalAgain)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);

    const variables = { input: { provider: 'GITHUB', token: 'ghp_secret' } };
    await post(gateway.url, {
      query: withVariables,
      variables,
      extensions: persisted(sha256Hex(withVariables)),
    });
    const byHash = await post(gateway.url, { variables, extensions: persisted(sha256Hex(withVariables)) });
    expect(byHash.json).toEqual({
      data: { addGitProviderToken: { __typename: 'AddGitProviderTokenPayload' } },
    });
  });

  it('refuses malformed persistedQuery extensions with PERSISTED_QUERY_INVALID', async () => {
    const { gateway } = await setup();
    const bodies = [
      { extensions: { persistedQuery: { version: 2, sha256Hash: sha256Hex(LIST) } } },
      { extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } },
      { extensions: { persistedQuery: { version: 1 } } },
      { query: LIST, extensions: { persistedQuery: 'yes' } },
    ];
    for (const body of bodies) {
      const answer = await post(gateway.url, body);
      expect({ body, status: answer.status, codes: codes(answer) }).toEqual({
        body,
        status: 400,
        codes: ['PERSISTED_QUERY_INVALID'],
      });
    }
    expect(gateway.calls).toHaveLength(0);
  });

  it('APQ_MAX_ENTRIES=0 answers hashes with PERSISTED_QUERY_NOT_SUPPORTED (clients then stop sending them)', async () => {
    const { gateway } = await setup({ automaticPersistedQueries: { maxEntries: 0 } });
    const answer = await post(gateway.url, { query: LIST, extensions: persisted(sha256Hex(LIST)) });
    expect(answer.json).toEqual({
      errors: [
        { message: 'PersistedQueryNotSupported', extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED' } },
      ],
    });
    const plain = await post(gateway.url, { query: LIST });
    expect(plain.json).toEqual({ data: { conversations: { edges: [] } } });
  });

  it('with an allow-list configured nothing registers: only listed operations run', async () => {
    const listed = '{ __typename }';
    const { gateway } = await setup({
      persistedOperations: new PersistedOperations({ [sha256Hex(listed)]: listed }),
    });
    const hash = sha256Hex(LIST);
    const register = await post(gateway.url, { query: LIST, extensions: persisted(hash) });
    expect(codes(register)).toEqual(['PERSISTED_QUERY_ONLY']);
    const after = await post(gateway.url, { extensions: persisted(hash) });
    expect(codes(after)).toEqual(['PERSISTED_QUERY_NOT_IN_LIST']);
    const allowed = await post(gateway.url, { extensions: persisted(sha256Hex(listed)) });
    expect(allowed.json).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('automatic persisted queries over graphql-ws', () => {
  it('misses, registers and hits over the socket (hash-only sends query ""), shared with HTTP', async () => {
    const { gateway } = await setup();
    const ws = wsClient(gateway.url);
    const hash = sha256Hex(LIST);

    const miss = new Collector(ws.iterate({ query: '', extensions: persisted(hash) }));
    await miss.finished();
    expect(miss.items).toEqual([]);
    expect(miss.error).toEqual([NOT_FOUND.errors[0]]);

    const mismatch = new Collector(ws.iterate({ query: LIST, extensions: persisted(sha256Hex('x')) }));
    await mismatch.finished();
    expect(mismatch.error).toEqual([
      expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH' } }),
    ]);

    const register = new Collector(ws.iterate({ query: LIST, extensions: persisted(hash) }));
    await register.finished();
    expect(register.items).toEqual([{ data: { conversations: { edges: [] } } }]);

    const hit = new Collector(ws.iterate({ query: '', extensions: persisted(hash) }));
    await hit.finished();
    expect(hit.items).toEqual([{ data: { conversations: { edges: [] } } }]);
    // One store for every transport.
    const overHttp = await post(gateway.url, { extensions: persisted(hash) });
    expect(overHttp.json).toEqual({ data: { conversations: { edges: [] } } });
  });
});

describe('LruQueryStore', () => {
  it('keeps at most maxEntries, evicting the least recently used', () => {
    const store = new LruQueryStore({ maxEntries: 2, maxBytes: 1000 });
    store.set('a', 'A');
    store.set('b', 'B');
    expect(store.get('a')).toBe('A'); // a is now the most recent
    store.set('c', 'C');
    expect([store.get('a'), store.get('b'), store.get('c')]).toEqual(['A', null, 'C']);
    expect(store.size).toBe(2);
  });

  it('keeps at most maxBytes of documents, and skips a document larger than the whole budget', () => {
    const store = new LruQueryStore({ maxEntries: 100, maxBytes: 10 });
    store.set('a', 'aaaa');
    store.set('b', 'bbbb');
    store.set('c', 'cccc');
    expect([store.get('a'), store.get('b'), store.get('c')]).toEqual([null, 'bbbb', 'cccc']);
    expect(store.bytes).toBe(8);
    store.set('huge', 'x'.repeat(11));
    expect(store.get('huge')).toBeNull();
    expect([store.get('b'), store.get('c')]).toEqual(['bbbb', 'cccc']);
    // Re-registering a hash replaces its bytes rather than counting them twice.
    store.set('c', 'cccc');
    expect(store.bytes).toBe(8);
  });
});
