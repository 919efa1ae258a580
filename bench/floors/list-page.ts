/**
 * The list floors' page mapping (bench/floors/http-floor.ts `--mode reshape` and engine-floor.ts): the
 * upstream page of 20 to the gateway's `conversations(first: 20)` connection, the nodes holding every
 * field the bench selects, as the gateway answers them. On V1 the record is mapped as the gateway maps
 * it (src/upstream/v1/conversation-record.ts): status from the sandbox status, `updated_at` as
 * lastUpdatedAt, the V0-only fields null (or 0 connections).
 *
 * The answer is the gateway's, byte for byte (bench/lib/same-bytes.ts checks it before a floor is
 * measured): cursors are `[1, pageToken, 20, index, "[null,null]"]` (a version, the filter key as
 * JSON), the last edge's names the start of the next upstream page (`index` -1), and `runtimeStatus`
 * drops the upstream's `STATUS$` prefix (src/schema/enums.ts). Until issue 31 the reshape floor wrote
 * older cursors (`[null, 20, index, ""]`) and upper-cased `runtimeStatus` whole: the same work, other
 * bytes, and nothing compared them.
 */
import type { BenchApi } from '../lib/bench-api.ts';

/** The upstream's page of 20: V0 `{results, next_page_id}`, V1 the app server's `{items, next_page_id}`. */
export const LIST_PATH: Record<BenchApi, string> = {
  v0: '/api/conversations?limit=20',
  v1: '/api/v1/app-conversations/search?limit=20',
};

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

const RUNTIME: Record<string, string> = {};
/** The gateway's RuntimeStatus name: `STATUS$READY` -> `READY`, `..._STOPPED_MESSAGE` -> `..._STOPPED`. */
function runtimeStatusName(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  let value = RUNTIME[raw];
  if (value === undefined) {
    const name = raw.slice(raw.indexOf('$') + 1);
    value = name.endsWith('_STOPPED_MESSAGE') ? name.slice(0, -'_MESSAGE'.length) : name;
    RUNTIME[raw] = value;
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
    runtimeStatus: runtimeStatusName(r.runtime_status),
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

/** The cursor of edge `index` of a first page of 20 (no filter) in the gateway's spelling. */
const gatewayCursor = (pageToken: string | null, index: number): string =>
  Buffer.from(JSON.stringify([1, pageToken, 20, index, '[null,null]']), 'utf8').toString('base64url');

/** The `conversations` connection of one upstream page (the body as text), as the gateway answers it. */
export function listConnection(text: string, api: BenchApi) {
  const page = JSON.parse(text) as {
    results?: UpstreamRecord[];
    items?: V1Record[];
    next_page_id: string | null;
  };
  const records = (api === 'v0' ? page.results : page.items) ?? [];
  const last = records.length - 1;
  const edges = records.map((record, index) => ({
    cursor:
      index === last && page.next_page_id !== null
        ? gatewayCursor(page.next_page_id, -1)
        : gatewayCursor(null, index),
    node: api === 'v0' ? toNode(record as UpstreamRecord) : toV1Node(record as V1Record),
  }));
  return {
    edges,
    pageInfo: { hasNextPage: page.next_page_id !== null, endCursor: edges.at(-1)?.cursor ?? null },
  };
}
