/**
 * V1 conversation reads on the app server: search (one page, the repository and trigger filters
 * applied here because V1 has neither) and the batch get by `ids` (one call for any number of ids),
 * with conversations still starting read from their start tasks so a create is readable at once.
 */
import type { AppConversationStartTaskRecord, PageRecord } from '../../contract/v1/app-server.ts';
import { credentialSecret, type UpstreamCredentials } from '../credentials.ts';
import { unexpectedAnswer } from '../failures.ts';
import type { ConversationFilter, ConversationPage, ConversationPageRequest } from '../port/conversation.ts';
import { UpstreamDomainError } from '../port/errors.ts';
import { KNOWN_GIT_PROVIDERS, KNOWN_TRIGGERS, knownOrUnknown } from '../port/vocabulary.ts';
import { scrubSecrets } from '../rejection-message.ts';
import { upstreamTimestampToUtc } from '../timestamps.ts';
import { readAppConversation, readListedConversation, type V1Conversation } from './conversation-record.ts';
import { hexId } from './ids.ts';
import { type CallScope, call } from './scope.ts';

/** The app server's bounds: `limit` 1..100, fewer than 100 ids per batch get. */
const V1_MAX_PAGE = 100;
const MAX_IDS_PER_CALL = 99;
/** How far back a start task is looked for when an id is not (yet) a conversation. */
const PENDING_START_WINDOW_MS = 30 * 60 * 1000;

const SEARCH = '/api/v1/app-conversations/search';
const BATCH = '/api/v1/app-conversations';

/**
 * GET /api/v1/app-conversations/search: one page, newest first. V1 has no repository or trigger
 * filter, so they are applied to the page here, after the upstream cut it: the page comes back short,
 * exactly as V0's filter-after-cut pages do, and the page walker refills it from the next pages.
 */
export async function searchConversations(
  scope: CallScope,
  page: ConversationPageRequest,
  filter: ConversationFilter,
): Promise<ConversationPage> {
  // A number needs no encoding, and the first page (no token) is the common one: no URLSearchParams
  // (~0.25 µs) for it.
  let query = `limit=${Math.max(1, Math.min(page.limit, V1_MAX_PAGE))}`;
  if (page.token !== null) query += `&${new URLSearchParams({ page_id: page.token })}`;
  const body = await call<PageRecord<unknown>>(scope, {
    method: 'GET',
    path: `${SEARCH}?${query}`,
    route: `GET ${SEARCH}`,
  });
  if (!body || !Array.isArray(body.items)) throw unexpectedAnswer();
  const conversations = body.items.map((raw, index) => {
    const reading = readListedConversation(raw, scope.client.timeZone);
    if (reading.dropped === undefined) return reading.conversation;
    scope.client.reportDroppedRecord({ path: SEARCH, index, reason: reading.dropped });
    return null;
  });
  return {
    conversations: conversations.filter(
      (c) =>
        c === null ||
        ((filter.repository == null || c.selectedRepository === filter.repository) &&
          (filter.trigger == null || c.trigger === filter.trigger)),
    ),
    nextPageToken: typeof body.next_page_id === 'string' ? body.next_page_id : null,
  };
}

/**
 * GET /api/v1/app-conversations?ids=..&ids=..: every id in one call (chunks of 99, the later app
 * servers' bound), in request order; null for an unknown id, an Error for an unreadable record.
 * Ids that are no UUID cannot exist on V1 and are null without asking.
 */
export async function getConversations(
  scope: CallScope,
  ids: readonly string[],
): Promise<Array<V1Conversation | null | Error>> {
  const hexes = ids.map(hexId);
  const wanted = [...new Set(hexes.filter((id): id is string => id !== null))];
  const found = new Map<string, V1Conversation | Error>();
  for (let at = 0; at < wanted.length; at += MAX_IDS_PER_CALL) {
    const chunk = wanted.slice(at, at + MAX_IDS_PER_CALL);
    const query = new URLSearchParams(chunk.map((id) => ['ids', id]));
    const body = await call<unknown>(scope, {
      method: 'GET',
      path: `${BATCH}?${query}`,
      route: `GET ${BATCH}`,
    });
    if (!Array.isArray(body) || body.length !== chunk.length) throw unexpectedAnswer();
    body.forEach((raw, index) => {
      if (raw === null) return;
      const reading = readAppConversation(raw, scope.client.timeZone);
      const id = chunk[index] as string;
      if (reading.dropped === undefined) found.set(id, reading.read);
      else {
        scope.client.reportDroppedRecord({ path: BATCH, index, reason: reading.dropped });
        found.set(id, unexpectedAnswer());
      }
    });
  }
  return hexes.map((id) => (id === null ? null : (found.get(id) ?? null)));
}

/** A conversation whose start task has not made it one yet (or failed). */
export interface PendingStart {
  read: V1Conversation;
  /** The task's status (`WORKING`, ..., `ERROR`). */
  taskStatus: string;
  /** The task's `detail` on ERROR (the exception text; may be ""). */
  detail: string | null;
}

/**
 * The start tasks of `ids` (hex) begun in the last half hour and not READY, found by the id their
 * request supplied (a task names its conversation only at READY): one search call for all of them.
 * A READY task is not pending (its conversation is readable, or was deleted since).
 */
export async function findPendingStarts(
  scope: CallScope,
  ids: readonly string[],
): Promise<Map<string, PendingStart>> {
  const pending = new Map<string, PendingStart>();
  if (ids.length === 0) return pending;
  const since = new Date(Date.now() - PENDING_START_WINDOW_MS).toISOString();
  const query = new URLSearchParams({
    created_at__gte: since,
    sort_order: 'CREATED_AT_DESC',
    limit: String(V1_MAX_PAGE),
  });
  const path = '/api/v1/app-conversations/start-tasks/search';
  const body = await call<PageRecord<AppConversationStartTaskRecord>>(scope, {
    method: 'GET',
    path: `${path}?${query}`,
    route: `GET ${path}`,
  });
  if (!body || !Array.isArray(body.items)) throw unexpectedAnswer();
  const wanted = new Set(ids);
  for (const task of body.items) {
    const id = hexId(task?.request?.conversation_id);
    // Newest first: the first task naming an id is its latest start.
    if (id === null || !wanted.has(id) || pending.has(id) || task.status === 'READY') continue;
    pending.set(id, pendingOf(id, task, scope.client.timeZone));
  }
  return pending;
}

function pendingOf(id: string, task: AppConversationStartTaskRecord, timeZone: string): PendingStart {
  const failed = task.status === 'ERROR';
  const request = task.request ?? ({} as Partial<AppConversationStartTaskRecord['request']>);
  const createdAt = upstreamTimestampToUtc(task.created_at, timeZone);
  return {
    taskStatus: typeof task.status === 'string' ? task.status : 'WORKING',
    detail: typeof task.detail === 'string' ? task.detail : null,
    read: {
      conversation: {
        conversationId: id,
        title: `Conversation ${id}`,
        // What V0 answers for a conversation whose runtime is coming up, or failed to.
        status: failed ? 'ERROR' : 'STARTING',
        statusRaw: failed ? 'ERROR' : 'STARTING',
        runtimeStatus: null,
        runtimeStatusRaw: null,
        selectedRepository: request.selected_repository ?? null,
        selectedBranch: request.selected_branch ?? null,
        gitProvider: knownOrUnknown(KNOWN_GIT_PROVIDERS, request.git_provider ?? null),
        gitProviderRaw: request.git_provider ?? null,
        trigger: knownOrUnknown(KNOWN_TRIGGERS, request.trigger ?? null),
        triggerRaw: request.trigger ?? null,
        numConnections: 0,
        url: null,
        sessionApiKey: null,
        createdAt,
        lastUpdatedAt: upstreamTimestampToUtc(task.updated_at, timeZone) ?? createdAt,
        prNumbers: Array.isArray(request.pr_number) ? request.pr_number.filter(Number.isInteger) : [],
        executionStatus: null,
        executionStatusRaw: null,
        sandboxStatus: null,
        sandboxStatusRaw: null,
        llmModel: request.llm_model ?? null,
        metrics: null,
        parentConversationId: hexId(request.parent_conversation_id),
        subConversationIds: [],
      },
      sandboxId: typeof task.sandbox_id === 'string' ? task.sandbox_id : null,
      sandboxStatus: null,
      executionStatus: null,
      agent: null,
    },
  };
}

/** A start task that ended in ERROR: readable (status ERROR) and, for anything else, this coded outcome. */
export function startFailed(pending: PendingStart, credentials: UpstreamCredentials): UpstreamDomainError {
  const detail = scrubSecrets(
    pending.detail ?? '',
    [credentialSecret(credentials)].filter((s) => s !== ''),
  );
  return new UpstreamDomainError(
    `The conversation failed to start${detail === '' ? '' : `: ${detail}`}`,
    'START_TASK$ERROR',
  );
}
