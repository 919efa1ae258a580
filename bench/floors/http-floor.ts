/**
 * HTTP floor of the list scenario: the least work Node can do for the gateway's `conversations(first: 20)`
 * answer, run as its own process beside the gateway (bench/lib/http-comparison.ts alternates them).
 *
 *   node --import tsx bench/floors/http-floor.ts --upstream http://127.0.0.1:PORT --mode proxy|reshape [--api v0|v1]
 *
 * Every request (whatever its path and body: the load generator sends the gateway's GraphQL POST) is
 * read to its end, then answered from one upstream page of 20 carrying the caller's X-Session-API-Key,
 * through one undici Pool (the gateway's default 64 connections): V0 `GET /api/conversations?limit=20`
 * (`{results, next_page_id}`), V1 the app server's `GET /api/v1/app-conversations/search?limit=20`
 * (`{items, next_page_id}`):
 * - `proxy`: the upstream body passed through as bytes (one hop, no parsing);
 * - `reshape`: JSON.parse of the page, the 20 records mapped to the camelCase node shape with global ids
 *   and cursors (list-page.ts, shared with engine-floor.ts; on V1 as the gateway maps V1's record),
 *   JSON.stringify of `{data: {conversations: {edges, pageInfo}}}`.
 * Prints `floor: http://HOST:PORT/graphql` once it listens. Not a product: no limits, no errors mapped.
 */
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { serveFloor } from './floor-server.ts';
import { LIST_PATH, listConnection } from './list-page.ts';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    mode: { type: 'string', default: 'reshape' },
    api: { type: 'string', default: 'v0' },
    path: { type: 'string' },
  },
});
if (!values.upstream) throw new Error('--upstream is required');
const mode = values.mode;
if (mode !== 'proxy' && mode !== 'reshape') throw new Error('--mode is proxy or reshape');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');
const upstreamPath = values.path ?? LIST_PATH[api];
const pool = new Pool(values.upstream, { connections: 64, pipelining: 1 });

const reshape = (text: string): string =>
  JSON.stringify({ data: { conversations: listConnection(text, api) } });

serveFloor({
  label: `${mode}, ${api}`,
  readBody: false,
  async answer(req, res) {
    const key = req.headers['x-session-api-key'];
    const upstream = await pool.request({
      path: upstreamPath,
      method: 'GET',
      headers: typeof key === 'string' ? { 'x-session-api-key': key } : {},
    });
    if (mode === 'reshape') return reshape(await upstream.body.text());
    res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
    for await (const chunk of upstream.body) res.write(chunk);
    res.end();
    return null;
  },
  close: () => pool.close(),
});
