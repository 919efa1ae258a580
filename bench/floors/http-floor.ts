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
 *   and cursors, JSON.stringify of `{data: {conversations: {edges, pageInfo}}}`. On V1 the record is
 *   mapped as the gateway maps it (src/upstream/v1/conversation-record.ts): status from the sandbox
 *   status, `updated_at` as lastUpdatedAt, the V0-only fields null (or 0 connections).
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
    api: { type: 'string', default: 'v0' },
    path: { type: 'string' },
  },
});
if (!values.upstream) throw new Error('--upstream is required');
const mode = values.mode;
if (mode !== 'proxy' && mode !== 'reshape') throw new Error('--mode is proxy or reshape');
const api = values.api;
if (api !== 'v0' && api !== 'v1') throw new Error('--api is v0 or v1');
const upstreamPath =
  values.path ?? (api === 'v0' ? '/api/conversations?limit=20' : '/api/v1/app-conversations/search?limit=20');
const pool = new Pool(values.upstream, { connections: 64, pipelining: 1 });

type UpstreamRecord = Record<string, unknown> & { conversation_id: string };
type V1Record = Record<string, unknown> & { id: string };

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

/** V1: the V0 status the upstream's own V0 shim gave a sandbox status (the gateway's table). */
const STATUS_OF_SANDBOX: Record<string, string> = {
  RUNNING: 'RUNNING',
  STARTING: 'STARTING',
  PAUSED: 'STOPPED',
  ERROR: 'ERROR',
  MISSING: 'ARCHIVED',
};

/** The same node from a V1 `AppConversation` (timestamps already UTC with `Z` on the app server). */
function toV1Node(r: V1Record) {
  const status =
    typeof r.sandbox_status === 'string' ? (STATUS_OF_SANDBOX[r.sandbox_status] ?? r.sandbox_status) : null;
  return {
    id: Buffer.from(`Conversation:${r.id}`, 'utf8').toString('base64url'),
    conversationId: r.id,
    title: r.title ?? `Conversation ${r.id}`,
    status: enumValue(status),
    statusRaw: status,
    runtimeStatus: null,
    runtimeStatusRaw: null,
    selectedRepository: r.selected_repository ?? null,
    selectedBranch: r.selected_branch ?? null,
    gitProvider: enumValue(r.git_provider),
    gitProviderRaw: r.git_provider ?? null,
    trigger: enumValue(r.trigger),
    triggerRaw: r.trigger ?? null,
    numConnections: 0,
    url: null,
    sessionApiKey: null,
    createdAt: r.created_at ?? null,
    lastUpdatedAt: r.updated_at ?? null,
    prNumbers: r.pr_number ?? [],
  };
}

function reshape(text: string): string {
  const page = JSON.parse(text) as {
    results?: UpstreamRecord[];
    items?: V1Record[];
    next_page_id: string | null;
  };
  const records = (api === 'v0' ? page.results : page.items) ?? [];
  const edges = records.map((record, index) => ({
    // Same content as the gateway's cursor: page token, page size, index, filter key.
    cursor: Buffer.from(JSON.stringify([null, 20, index, '']), 'utf8').toString('base64url'),
    node: api === 'v0' ? toNode(record as UpstreamRecord) : toV1Node(record as V1Record),
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
  console.log(`floor: http://127.0.0.1:${port}/graphql (${mode}, ${api})`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.close().then(() => process.exit(0));
});
