/**
 * HTTP floor of the list scenario: the least work Node can do for the gateway's `conversations(first: 20)`
 * answer, run as its own process beside the gateway (bench/lib/http-comparison.ts alternates them).
 *
 *   node --import tsx bench/floors/http-floor.ts --upstream http://127.0.0.1:PORT --mode proxy|reshape
 *
 * Every request (whatever its path and body: the load generator sends the gateway's GraphQL POST) is
 * read to its end, then answered from one upstream `GET /api/conversations?limit=20` carrying the
 * caller's X-Session-API-Key, through one undici Pool (the gateway's default 64 connections):
 * - `proxy`: the upstream body passed through as bytes (one hop, no parsing);
 * - `reshape`: JSON.parse of the page, the 20 records mapped to the camelCase node shape with global ids
 *   and cursors, JSON.stringify of `{data: {conversations: {edges, pageInfo}}}`.
 * Prints `floor: http://HOST:PORT/graphql` once it listens. Not a product: no limits, no errors mapped.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    mode: { type: 'string', default: 'reshape' },
    path: { type: 'string', default: '/api/conversations?limit=20' },
  },
});
if (!values.upstream) throw new Error('--upstream is required');
const mode = values.mode;
if (mode !== 'proxy' && mode !== 'reshape') throw new Error('--mode is proxy or reshape');
const upstreamPath = values.path as string;
const pool = new Pool(values.upstream, { connections: 64, pipelining: 1 });

type UpstreamRecord = Record<string, unknown> & { conversation_id: string };

const UPPER: Record<string, string> = {};
/** `running` -> `RUNNING`, cached (the gateway maps enum values through a table too). */
function enumValue(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  let value = UPPER[raw];
  if (value === undefined) {
    value = raw.toUpperCase();
    UPPER[raw] = value;
  }
  return value;
}

/** The node shape of the gateway's Conversation, with every field the bench selects. */
function toNode(r: UpstreamRecord) {
  return {
    id: Buffer.from(`Conversation:${r.conversation_id}`, 'utf8').toString('base64url'),
    conversationId: r.conversation_id,
    title: r.title ?? null,
    status: enumValue(r.status),
    statusRaw: r.status ?? null,
    runtimeStatus: enumValue(r.runtime_status),
    runtimeStatusRaw: r.runtime_status ?? null,
    selectedRepository: r.selected_repository ?? null,
    selectedBranch: r.selected_branch ?? null,
    gitProvider: enumValue(r.git_provider),
    gitProviderRaw: r.git_provider ?? null,
    trigger: enumValue(r.trigger),
    triggerRaw: r.trigger ?? null,
    numConnections: r.num_connections ?? null,
    url: r.url ?? null,
    sessionApiKey: r.session_api_key ?? null,
    createdAt: r.created_at ?? null,
    lastUpdatedAt: r.last_updated_at ?? null,
    prNumbers: r.pr_number ?? [],
  };
}

function reshape(text: string): string {
  const page = JSON.parse(text) as { results: UpstreamRecord[]; next_page_id: string | null };
  const edges = page.results.map((record, index) => ({
    // Same content as the gateway's cursor: page token, page size, index, filter key.
    cursor: Buffer.from(JSON.stringify([null, 20, index, '']), 'utf8').toString('base64url'),
    node: toNode(record),
  }));
  return JSON.stringify({
    data: {
      conversations: {
        edges,
        pageInfo: { hasNextPage: page.next_page_id !== null, endCursor: edges.at(-1)?.cursor ?? null },
      },
    },
  });
}

const server = createServer((req, res) => {
  req.resume();
  req.once('end', async () => {
    try {
      const key = req.headers['x-session-api-key'];
      const upstream = await pool.request({
        path: upstreamPath,
        method: 'GET',
        headers: typeof key === 'string' ? { 'x-session-api-key': key } : {},
      });
      if (mode === 'proxy') {
        res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
        for await (const chunk of upstream.body) res.write(chunk);
        res.end();
        return;
      }
      const body = reshape(await upstream.body.text());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    } catch (error) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ message: String(error) }] }));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`floor: http://127.0.0.1:${port}/graphql (${mode})`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.close().then(() => process.exit(0));
});
