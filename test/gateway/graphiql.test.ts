/**
 * GraphiQL over HTTP, in-process (`yoga.fetch`): the small page (options, no inline script, no CDN,
 * ETag and 304, HEAD), the hashed assets (immutable caching, brotli / gzip / identity negotiated,
 * every representation decoding to the same bytes, names matching contents), refusals of unknown
 * assets and other methods, and GraphQL on the same path left alone.
 */
import { createHash } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ASSET_CACHE_CONTROL } from '../../src/gateway/graphiql/graphiql.ts';
import { etagMatches, negotiateEncoding } from '../../src/gateway/graphiql/static-response.ts';
import { createLogger } from '../../src/gateway/observability/logging.ts';
import { createGateway, GRAPHIQL_DEFAULT_QUERY } from '../../src/gateway/yoga.ts';

// Nothing listens on this origin: these requests never reach an upstream.
const gateway = createGateway({
  upstreamUrl: 'http://127.0.0.1:9',
  logger: createLogger({ level: 'silent' }),
});
afterAll(() => gateway.close());

const ORIGIN = 'http://gateway.test';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Response> {
  return Promise.resolve(gateway.yoga.fetch(`${ORIGIN}${path}`, { method, headers }));
}

async function page(headers: Record<string, string> = {}) {
  const response = await get('/graphql', { accept: BROWSER_ACCEPT, ...headers });
  return { response, html: await response.text() };
}

function assetPaths(html: string): string[] {
  return [...html.matchAll(/"(\/graphiql\/assets\/[^"]+)"/g)].map((match) => match[1] as string);
}

function decode(body: Buffer, encoding: string | null): Buffer {
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'gzip') return gunzipSync(body);
  return body;
}

describe('the GraphiQL page', () => {
  it('is small, no-cache with an ETag, and carries the gateway options without inline script or CDN', async () => {
    const { response, html } = await page();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('etag')).toMatch(/^"[0-9a-f]{16}"$/);
    expect(response.headers.get('vary')).toBe('Accept, Accept-Encoding');
    // Before: 9,054,340 bytes with everything inline.
    expect(Buffer.byteLength(html)).toBeLessThan(3_000);
    expect(html).not.toMatch(/https?:\/\//);
    // One inline script element only, and it is JSON data, not code.
    expect([...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>/g)].map((match) => match[0])).toEqual([
      '<script id="graphiql-config" type="application/json">',
    ]);
    const config = JSON.parse(/<script id="graphiql-config"[^>]*>(.*?)<\/script>/s.exec(html)?.[1] ?? '');
    expect(config.options).toEqual({
      title: 'Conversation gateway',
      defaultQuery: GRAPHIQL_DEFAULT_QUERY,
      headers: JSON.stringify({ 'X-Session-API-Key': '' }, null, 2),
      shouldPersistHeaders: false,
    });
    expect(Object.keys(config.workers).sort()).toEqual(['editorWorkerService', 'graphql', 'json']);
    // "<your key>" in the default query cannot close the script element.
    expect(html).toContain('\\u003cyour key>');
  });

  it('answers 304 to a matching If-None-Match, compressed or not', async () => {
    for (const encoding of ['br', 'gzip', 'identity']) {
      const first = await page({ 'accept-encoding': encoding });
      const etag = first.response.headers.get('etag') ?? '';
      const again = await get('/graphql', {
        accept: BROWSER_ACCEPT,
        'accept-encoding': encoding,
        'if-none-match': `"other", W/${etag}`,
      });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('cache-control')).toBe('no-cache');
      expect(await again.text()).toBe('');
      const stale = await get('/graphql', { accept: BROWSER_ACCEPT, 'if-none-match': '"0000000000000000"' });
      expect(stale.status).toBe(200);
      await stale.body?.cancel();
    }
  });

  it('answers HEAD from a browser like GET without a body (it was 406)', async () => {
    const { response: got } = await page();
    const head = await get('/graphql', { accept: BROWSER_ACCEPT }, 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    for (const name of ['content-type', 'content-length', 'etag', 'cache-control', 'vary']) {
      expect([name, head.headers.get(name)]).toEqual([name, got.headers.get(name)]);
    }
  });

  it('leaves GraphQL on the same path alone', async () => {
    const response = await get(`/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      accept: 'application/graphql-response+json',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('the GraphiQL assets', () => {
  it('are named by the hash of their content and cached for good, in every coding', async () => {
    const { html } = await page();
    const paths = assetPaths(html);
    expect(paths.length).toBe(7);
    let identityTotal = 0;
    for (const path of paths) {
      const plain = await get(path);
      expect(plain.status).toBe(200);
      expect(plain.headers.get('cache-control')).toBe(ASSET_CACHE_CONTROL);
      expect(plain.headers.get('vary')).toBe('Accept-Encoding');
      expect(plain.headers.get('content-encoding')).toBeNull();
      const bytes = Buffer.from(await plain.arrayBuffer());
      expect(Number(plain.headers.get('content-length'))).toBe(bytes.byteLength);
      identityTotal += bytes.byteLength;
      const hash = /\.([0-9a-f]{16})\.[a-z]+$/.exec(path)?.[1];
      expect(createHash('sha256').update(bytes).digest('hex').slice(0, 16)).toBe(hash);

      for (const coding of ['br', 'gzip']) {
        const compressed = await get(path, { 'accept-encoding': coding });
        const encoding = compressed.headers.get('content-encoding');
        const body = Buffer.from(await compressed.arrayBuffer());
        // Tiny files may not be worth compressing; large ones always are.
        if (bytes.byteLength > 10_000) {
          expect([path, encoding]).toEqual([path, coding]);
          expect(body.byteLength).toBeLessThan(bytes.byteLength * 0.7);
        }
        expect(decode(body, encoding).equals(bytes)).toBe(true);
        expect(compressed.headers.get('etag')).toBe(encoding ? `"${hash}-${encoding}"` : `"${hash}"`);
      }
    }
    // render-graphiql's bundle, CSS, three workers and favicon, plus the boot script.
    expect(identityTotal).toBeGreaterThan(8_000_000);
  });

  it('pick brotli over gzip, honour q=0, and answer HEAD without a body', async () => {
    const { html } = await page();
    const script = assetPaths(html).find((path) => /\/graphiql\.[0-9a-f]{16}\.js$/.test(path)) ?? '';
    const codingFor = async (acceptEncoding: string) => {
      const response = await get(script, { 'accept-encoding': acceptEncoding }, 'HEAD');
      expect(await response.text()).toBe('');
      return response.headers.get('content-encoding');
    };
    expect(await codingFor('gzip, deflate, br, zstd')).toBe('br');
    expect(await codingFor('br;q=0, gzip')).toBe('gzip');
    expect(await codingFor('br;q=0.5, gzip;q=0.8')).toBe('gzip');
    expect(await codingFor('*')).toBe('br');
    expect(await codingFor('deflate')).toBeNull();
    expect(await codingFor('gzip;q=0, br;q=0')).toBeNull();
  });

  it('refuses unknown names (404) and methods other than GET and HEAD (405)', async () => {
    const missing = await get('/graphiql/assets/graphiql.0000000000000000.js');
    expect(missing.status).toBe(404);
    await missing.body?.cancel();
    const { html } = await page();
    const post = await get(assetPaths(html)[0] ?? '', {}, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await post.body?.cancel();
  });
});

describe('content negotiation helpers', () => {
  it('negotiateEncoding follows q-values, prefers brotli on ties, falls back to identity', () => {
    expect(negotiateEncoding(null)).toBe('identity');
    expect(negotiateEncoding('')).toBe('identity');
    expect(negotiateEncoding('gzip')).toBe('gzip');
    expect(negotiateEncoding('gzip, br')).toBe('br');
    expect(negotiateEncoding('BR;Q=0.1, GZIP;Q=0.2')).toBe('gzip');
    expect(negotiateEncoding('*;q=0.5, gzip;q=0')).toBe('br');
    expect(negotiateEncoding('identity')).toBe('identity');
    expect(negotiateEncoding('br;q=nonsense')).toBe('identity');
  });

  it('etagMatches compares weakly, accepts lists and *', () => {
    expect(etagMatches(null, '"a"')).toBe(false);
    expect(etagMatches('"a"', '"a"')).toBe(true);
    expect(etagMatches('W/"a"', '"a"')).toBe(true);
    expect(etagMatches('"b", "a"', '"a"')).toBe(true);
    expect(etagMatches('*', '"a"')).toBe(true);
    expect(etagMatches('"b"', '"a"')).toBe(false);
  });
});
