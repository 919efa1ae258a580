/**
 * The app server's conversation routes, as the later app-server code has them (OpenHands/OpenHands
 * `openhands/app_server/app_conversation/app_conversation_router.py` at `fa902bc`, models at `8eb6da2`;
 * docs/upstream-facts.md, "V1 app server: conversations and start tasks"): search (newest first, filters in
 * SQL before the page is cut, `limit` 1..100 as a 422, opaque page ids), count (every metadata row of
 * the caller, V0 conversations and sub-conversations included), batch get by `ids` (null for unknown,
 * request order; 400 for non-UUIDs or 100+ ids), and DELETE, PATCH and send-message under
 * `/api/v1/app-conversations/{id}`. Another tenant's conversation is an unknown one on every route.
 */
import type { ApiRequest, ApiResponse, Route } from '../api-route.ts';
import { batchAnswer, json, validationError } from '../api-route.ts';
import { issue, type ValidationIssue } from '../validation/issue.ts';
import type { V1Agent } from './agent.ts';
import { type AppRecords, decodePageId, detail, internalError, page } from './app-records.ts';
import { uuidHex } from './conversation-state.ts';
import { utcTimestamp } from './event-factory.ts';
import { readMessage } from './message-body.ts';
import { type QueryDatetime, QueryReader } from './query.ts';
import type { ConversationFilters } from './records.ts';
import type { Sandboxes } from './sandboxes.ts';
import type { V1Store } from './store.ts';

/** What the conversation routes need. */
export interface AppConversationRouteDeps {
  store: V1Store;
  sandboxes: Sandboxes;
  agent: V1Agent;
  records: AppRecords;
}

const BASE = '/api/v1/app-conversations';
const ONE = /^\/api\/v1\/app-conversations\/([^/]+)$/;
const SEND = /^\/api\/v1\/app-conversations\/([^/]+)\/send-message$/;

/** `limit`: default 100, `gt=0, le=100` (the later code; app main's `lte` let 101 through to a 500). */
export function readLimit(q: QueryReader): number {
  const limit = q.int('limit', 100, { gt: 0 });
  if (limit > 100) {
    const text = q.string('limit') ?? '';
    const msg = 'Input should be less than or equal to 100';
    q.issues.push(issue('less_than_equal', ['query', 'limit'], msg, text, { le: 100 }));
    return 100;
  }
  return limit;
}

/** Aware UTC text of a query datetime (a naive value is read as UTC, as the app server's rows are). */
export const utcText = (d: QueryDatetime | null) =>
  d === null
    ? null
    : `${d.utc.toISOString().slice(0, 19)}.${String(d.utc.getUTCMilliseconds() * 1000).padStart(6, '0')}Z`;

/** The ids of a batch get, or the later code's 400s (non-UUIDs, 100 or more ids). */
export function readIds(request: ApiRequest, name: string): string[] | ApiResponse {
  const values = request.query.getAll(name);
  if (values.length === 0)
    return validationError([issue('missing', ['query', name], 'Field required', null)]);
  if (values.length >= 100) return detail(400, 'Too many ids requested. Maximum is 99.');
  const invalid = values.filter((v) => uuidHex(v) === undefined);
  if (invalid.length > 0) {
    return detail(400, `Invalid UUID format for ${name}: [${invalid.map((v) => `'${v}'`).join(', ')}]`);
  }
  return values.map((v) => uuidHex(v) as string);
}

function readFilters(q: QueryReader): ConversationFilters {
  return {
    titleContains: q.string('title__contains'),
    createdGte: utcText(q.datetime('created_at__gte')),
    createdLt: utcText(q.datetime('created_at__lt')),
    updatedGte: utcText(q.datetime('updated_at__gte')),
    updatedLt: utcText(q.datetime('updated_at__lt')),
    includeSubConversations: q.bool('include_sub_conversations', false),
    sandboxId: q.string('sandbox_id__eq'),
  };
}

/** Builds the conversation routes. */
export function createAppConversationRoutes(deps: AppConversationRouteDeps): Route[] {
  const { store, sandboxes, agent, records } = deps;

  function search(request: ApiRequest): ApiResponse {
    const q = new QueryReader(request.query);
    const filters = readFilters(q);
    const limit = readLimit(q);
    if (q.issues.length > 0) return validationError(q.issues);
    const offset = decodePageId(q.string('page_id'));
    const rows = store.searchConversations(request.tenant, filters, offset, limit + 1);
    return json(200, page(rows, offset, limit, records.conversation));
  }

  function count(request: ApiRequest): ApiResponse {
    const q = new QueryReader(request.query);
    const filters = readFilters(q);
    if (q.issues.length > 0) return validationError(q.issues);
    return json(200, store.countConversations(request.tenant, filters));
  }

  function batchGet(request: ApiRequest): ApiResponse {
    const ids = readIds(request, 'ids');
    if (!Array.isArray(ids)) return ids;
    return batchAnswer(ids, (id) => {
      const conversation = store.getConversation(request.tenant, id);
      return conversation && records.conversation(conversation);
    });
  }

  async function remove(request: ApiRequest): Promise<ApiResponse> {
    const hex = uuidHex(request.params[0] ?? '');
    if (hex === undefined) return detail(400, 'Invalid conversation ID format');
    const conversation = store.getConversation(request.tenant, hex);
    if (!conversation) return detail(404, 'Conversation not found');
    agent.forget(request.tenant, hex);
    store.deleteConversation(request.tenant, hex);
    // The sandbox goes too, in the background, unless another conversation still uses it.
    if (store.conversationsInSandbox(conversation.sandboxId).length === 0) {
      void sandboxes.remove(request.tenant, conversation.sandboxId).catch(() => undefined);
    }
    return json(200, { success: true });
  }

  function patch(request: ApiRequest): ApiResponse {
    const hex = uuidHex(request.params[0] ?? '');
    // `UUID(conversation_id)` is unguarded there: a non-UUID id is an uncaught ValueError.
    if (hex === undefined) return internalError();
    const body = request.body as Record<string, unknown>;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      const msg = 'Input should be a valid dictionary or object to extract fields from';
      return validationError([issue('model_attributes_type', ['body'], msg, body)]);
    }
    const issues: ValidationIssue[] = [];
    const changes: Record<string, string | null> = {};
    for (const [field, key] of [
      ['title', 'title'],
      ['selected_repository', 'selectedRepository'],
      ['selected_branch', 'selectedBranch'],
      ['git_provider', 'gitProvider'],
    ] as const) {
      const value = body[field];
      if (value === undefined) continue;
      if (value === null || typeof value === 'string') changes[key] = value;
      else issues.push(issue('string_type', ['body', field], 'Input should be a valid string', value));
    }
    let visibility: { public?: boolean | null } = {};
    if (body.public !== undefined) {
      if (body.public === null || typeof body.public === 'boolean') visibility = { public: body.public };
      else
        issues.push(issue('bool_type', ['body', 'public'], 'Input should be a valid boolean', body.public));
    }
    if (issues.length > 0) return validationError(issues);
    const updated = store.updateConversation(request.tenant, hex, {
      ...changes,
      ...visibility,
      updatedAt: utcTimestamp(),
    });
    return updated ? json(200, records.conversation(updated)) : detail(404, 'unknown_app_conversation');
  }

  function sendMessage(request: ApiRequest): ApiResponse {
    const hex = uuidHex(request.params[0] ?? '');
    const conversation = hex === undefined ? undefined : store.getConversation(request.tenant, hex);
    if (!conversation || hex === undefined) return detail(404, 'Conversation not found');
    if (request.bodyProblem) return request.bodyProblem;
    const message = readMessage(request.body, ['body'], { runDefault: true, minContent: 1 });
    if (!message.ok) return validationError(message.issues);
    const sandbox = store.getSandbox(request.tenant, conversation.sandboxId);
    if (!sandbox) return detail(410, `Sandbox ${conversation.sandboxId} is MISSING.`);
    if (sandbox.status !== 'RUNNING') {
      return detail(
        409,
        `Sandbox is ${sandbox.status}. Use POST /api/v1/sandboxes/${sandbox.id}/resume to resume it first.`,
      );
    }
    agent.send(request.tenant, hex, message.value.content, message.value.run);
    return json(200, { success: true, sandbox_status: 'RUNNING', message: null });
  }

  return [
    { method: 'GET', pattern: new RegExp(`^${BASE}/search$`), body: 'ignored', handle: search },
    { method: 'GET', pattern: new RegExp(`^${BASE}/count$`), body: 'ignored', handle: count },
    { method: 'GET', pattern: new RegExp(`^${BASE}$`), body: 'ignored', handle: batchGet },
    { method: 'DELETE', pattern: ONE, body: 'ignored', handle: remove },
    { method: 'PATCH', pattern: ONE, body: 'required', handle: patch },
    { method: 'POST', pattern: SEND, body: 'deferred', handle: sendMessage },
  ];
}
