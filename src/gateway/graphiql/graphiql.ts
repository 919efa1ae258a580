/**
 * gateway/graphiql/: GraphiQL served from the gateway itself (no CDN): the page (this file), the
 * assets taken from render-graphiql (graphiql-assets.ts) and static answers with compression and
 * ETags (static-response.ts). It imports no other room.
 *
 * Serves GraphiQL, replacing Yoga's own `graphiql` option (which sends render-graphiql's 9 MB page,
 * uncompressed and uncacheable, on every visit):
 * - `GET|HEAD <endpoint>` accepting HTML: a ~1.5 KB page, `Cache-Control: no-cache` with an ETag
 *   (If-None-Match -> 304). GraphiQL's own POSTs to the same URL make browsers drop their copy
 *   (RFC 9111 §4.4), so in practice a reload re-fetches this small page; that is why it is small.
 * - `GET|HEAD /graphiql/assets/<name>.<hash>.<ext>`: the bundle, CSS, Monaco workers and favicon under
 *   content-hashed names, `Cache-Control: public, max-age=31536000, immutable`, brotli or gzip as
 *   the browser accepts (graphiql-assets.ts, static-response.ts).
 * Runs before every other plugin, so these requests never reach limits, rate limits or the log of
 * operations.
 */
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import {
  GRAPHIQL_ASSETS_PATH,
  type GraphiQLAssets,
  loadGraphiQLAssets,
  renderGraphiQLPage,
} from './graphiql-assets.ts';
import { negotiateEncoding, StaticBody, staticResponse } from './static-response.ts';

/** Options of {@link useStaticGraphiQL}. */
export interface GraphiQLServingOptions {
  /** Path of the GraphQL endpoint; browsers opening it get GraphiQL. */
  endpoint: string;
  /** What GraphiQL shows: title, default query, default headers, header persistence... */
  graphiql: GraphiQLOptions;
}

/** Hashed names never change content: cache for a year and never revalidate. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** The page names the current hashes: always revalidate (a 304 while nothing changed). */
const PAGE_CACHE_CONTROL = 'no-cache';

/** The Yoga plugin serving GraphiQL's page and assets. */
export function useStaticGraphiQL(options: GraphiQLServingOptions): Plugin {
  let page: Promise<{ assets: GraphiQLAssets; body: StaticBody }> | undefined;
  const loadPage = () => {
    page ??= loadGraphiQLAssets().then((assets) => ({
      assets,
      body: new StaticBody(Buffer.from(renderGraphiQLPage(assets, options.graphiql), 'utf8')),
    }));
    return page;
  };
  const pagePaths = new Set([options.endpoint, `${options.endpoint}/`]);

  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      const { pathname } = url;
      if (pathname.startsWith(GRAPHIQL_ASSETS_PATH)) {
        return (async () => {
          if (request.method !== 'GET' && request.method !== 'HEAD') {
            endResponse(plain(fetchAPI, 405, 'Method not allowed.', { allow: 'GET, HEAD' }));
            return;
          }
          const asset = (await loadGraphiQLAssets()).byPath.get(pathname);
          if (!asset) {
            endResponse(plain(fetchAPI, 404, 'Not found.'));
            return;
          }
          endResponse(
            await staticResponse(
              request,
              asset.body,
              { contentType: asset.contentType, cacheControl: ASSET_CACHE_CONTROL },
              fetchAPI.Response,
            ),
          );
        })();
      }
      if (!pagePaths.has(pathname) || !wantsPage(request)) return;
      return (async () => {
        const { assets, body } = await loadPage();
        // The browser asks for the assets right after the page: start compressing them now, in the
        // coding it accepts (once per process; later calls return the kept copies).
        const coding = negotiateEncoding(request.headers.get('accept-encoding'));
        for (const asset of assets.byPath.values()) void asset.body.representation(coding).catch(() => {});
        endResponse(
          await staticResponse(
            request,
            body,
            {
              contentType: 'text/html; charset=utf-8',
              cacheControl: PAGE_CACHE_CONTROL,
              // The same URL answers GraphQL results for other Accept headers.
              vary: ['Accept'],
            },
            fetchAPI.Response,
          ),
        );
      })();
    },
  };
}

/** A browser opening the endpoint: GET or HEAD accepting HTML (Yoga's own GraphiQL rule, plus HEAD). */
function wantsPage(request: Request): boolean {
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    (request.headers.get('accept') ?? '').includes('text/html')
  );
}

function plain(
  fetchAPI: { Response: typeof Response },
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new fetchAPI.Response(message, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache', ...headers },
  });
}
