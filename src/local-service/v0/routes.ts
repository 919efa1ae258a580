/**
 * The REST route table of the local service: the service-level routes (alive, health, git provider
 * tokens) and the conversation collection (create, search, get by id) are here, and the table takes in
 * the per-conversation history and lifecycle routes from history-routes.ts (which imports nothing from
 * here; what a route is lives in api-route.ts). Transport concerns (body limits, JSON parsing, auth,
 * rate limiting) live in http-server.ts.
 */
import { randomUUID } from 'node:crypto';
import type { GitProviderValue } from '../../contract/common.ts';
import { ALIVE_BODY } from '../../contract/common.ts';
import type {
  ConversationRecord,
  CreateConversationRequestRecord,
  CreateConversationResponseRecord,
  DomainErrorRecord,
  SearchConversationsResponseRecord,
} from '../../contract/v0/records.ts';
import { type ApiRequest, type ApiResponse, type Route, validationError } from '../api-route.ts';
import type { TenantId } from '../auth.ts';
import type { ProviderToken } from '../database.ts';
import { validateAddGitProviders } from '../validation/git-providers-body.ts';
import { createHistoryRoutes } from './history-routes.ts';
import { newStoredConversation } from './new-conversation.ts';
import type { RouteDeps, StoredConversation } from './seams.ts';
import { validateCreateConversation } from './validation/create-conversation-body.ts';
import { encodePageId, validateSearchQuery } from './validation/search-query.ts';
import { createWorkspaceRoutes } from './workspace-routes.ts';

/** The real server hides conversations older than this from search (not from GET by id). */
const SEARCH_MAX_AGE_MS = 10 * 24 * 60 * 60 * 1000;

/** `/api/conversations/{id}`: the id segment as FastAPI would capture it (any non-slash text). */
const CONVERSATION_PATH = /^\/api\/conversations\/([^/]+)$/;

/** `/api/conversations/{id}` and every route under it (events, start, stop, the workspace's): captures the id. */
export const CONVERSATION_SUBTREE = /^\/api\/conversations\/([^/]+)(?:\/.+)?$/;

function domainError(message: string, msgId: string): ApiResponse {
  const body: DomainErrorRecord = { status: 'error', message, msg_id: msgId };
  return { status: 400, body };
}

/** Builds the route table bound to the store and runtime. */
export function createRoutes(deps: RouteDeps): Route[] {
  const { store, tokens: providerTokens, runtime } = deps;
  const now = deps.now ?? Date.now;

  /** StoredConversation -> the wire record; liveness comes from the runtime, not the store. */
  function toRecord(c: StoredConversation): ConversationRecord {
    const running = runtime.isRunning(c.tenant, c.conversationId);
    const path = `/api/conversations/${c.conversationId}`;
    return {
      conversation_id: c.conversationId,
      title: c.title,
      last_updated_at: c.lastUpdatedAt,
      status: c.status,
      runtime_status: running ? c.runtimeStatus : null,
      selected_repository: c.selectedRepository,
      selected_branch: c.selectedBranch,
      git_provider: c.gitProvider,
      trigger: c.trigger,
      num_connections: runtime.connectionCount(c.tenant, c.conversationId),
      url: running ? (deps.nestedRuntime ? `${deps.serviceUrl()}${path}` : path) : null,
      session_api_key: running && deps.nestedRuntime ? c.sessionApiKey : null,
      created_at: c.createdAt,
      pr_number: c.prNumbers,
    };
  }

  function createConversation(request: ApiRequest): ApiResponse {
    const validated = validateCreateConversation(request.body);
    if (!validated.ok) return validationError(validated.issues);
    const body = validated.value;
    const { tenant } = request;

    if (typeof body.conversation_id === 'string') {
      const existing = store.getConversation(tenant, body.conversation_id);
      if (existing) return joinConversation(existing, body);
      // Ids are unique across tenants: an id held by someone else is simply not available, and the
      // answer says nothing more about that conversation.
      if (isIdTaken(body.conversation_id)) {
        return validationError([
          {
            type: 'value_error',
            loc: ['body', 'conversation_id'],
            msg: 'Value error, conversation_id is not available',
            input: body.conversation_id,
          },
        ]);
      }
    }

    let repository = body.repository ?? null;
    let gitProvider = (body.git_provider ?? null) as GitProviderValue | null;
    let initialMessage = body.initial_user_msg ?? null;
    let trigger = request.viaBearer ? 'openhands_api' : 'gui';
    if (body.suggested_task) {
      const task = body.suggested_task;
      trigger = 'suggested_task';
      initialMessage = `Please work on the ${task.task_type} task "${task.title}" (#${task.issue_number}) in ${task.repo}.`;
    } else if (body.create_microagent) {
      trigger = 'microagent_management';
      repository ??= body.create_microagent.repo;
      gitProvider ??= (body.create_microagent.git_provider ?? null) as GitProviderValue | null;
    }

    if (repository !== null && !canAccessRepository(tenant, gitProvider)) {
      return domainError(`Unable to access repo ${repository}`, 'STATUS$GIT_PROVIDER_AUTHENTICATION_ERROR');
    }

    const conversationId = body.conversation_id ?? randomUUID().replaceAll('-', '');
    const conversation = newStoredConversation(tenant, conversationId, {
      status: 'STARTING',
      selectedRepository: repository,
      selectedBranch: body.selected_branch ?? null,
      gitProvider,
      trigger,
      createdAt: new Date(now()).toISOString(),
      request: body,
    });
    try {
      store.insertConversation(conversation);
    } catch (error) {
      // A concurrent create chose the same id between our check and the insert.
      if (isUniqueViolation(error)) {
        return validationError([
          {
            type: 'value_error',
            loc: ['body', 'conversation_id'],
            msg: 'Value error, conversation_id is not available',
            input: conversationId,
          },
        ]);
      }
      throw error;
    }
    runtime.start(tenant, conversationId, {
      initialUserMessage: initialMessage,
      imageUrls: body.image_urls ?? null,
    });
    return ok(conversationId, 'STARTING');
  }

  function joinConversation(
    existing: StoredConversation,
    body: CreateConversationRequestRecord,
  ): ApiResponse {
    // Metadata stays as it was; the runtime drops the initial message when the agent already runs.
    const { alreadyRunning } = runtime.start(existing.tenant, existing.conversationId, {
      initialUserMessage: body.initial_user_msg ?? null,
      imageUrls: body.image_urls ?? null,
    });
    const status = alreadyRunning
      ? (store.getConversation(existing.tenant, existing.conversationId)?.status ?? 'RUNNING')
      : 'STARTING';
    return ok(existing.conversationId, status);
  }

  function ok(conversationId: string, conversationStatus: string): ApiResponse {
    const body: CreateConversationResponseRecord = {
      status: 'ok',
      conversation_id: conversationId,
      message: null,
      conversation_status: conversationStatus,
    };
    return { status: 200, body };
  }

  /** A repository needs a stored token: for the named provider, or any provider when none is named. */
  function canAccessRepository(tenant: TenantId, provider: GitProviderValue | null): boolean {
    const tokens = providerTokens.getProviderTokens(tenant);
    return provider === null ? Object.keys(tokens).length > 0 : tokens[provider] !== undefined;
  }

  function isIdTaken(conversationId: string): boolean {
    return store.conversationIdExists(conversationId);
  }

  function searchConversations(request: ApiRequest): ApiResponse {
    const validated = validateSearchQuery(request.query);
    if (!validated.ok) return validationError(validated.issues);
    const { offset, limit, selectedRepository, trigger } = validated.value;
    // One extra row tells whether another page exists, as the real server's slice-and-compare does.
    const rows = store.listConversations(request.tenant, offset, limit + 1);
    const page = rows.slice(0, limit);
    const oldest = now() - SEARCH_MAX_AGE_MS;
    // Filters run after the page is cut, like the real server: pages may come back short or empty
    // while next_page_id is still set.
    const results = page
      .filter((c) => Date.parse(c.createdAt) >= oldest)
      .filter((c) => selectedRepository === null || c.selectedRepository === selectedRepository)
      .filter((c) => trigger === null || c.trigger === trigger)
      .map(toRecord);
    const body: SearchConversationsResponseRecord = {
      results,
      next_page_id: rows.length > limit ? encodePageId(offset + limit) : null,
    };
    return { status: 200, body };
  }

  function getConversation(request: ApiRequest): ApiResponse {
    const id = request.params[0] ?? '';
    const found = store.getConversation(request.tenant, id);
    // The real server answers 200 null, not 404, for an unknown id.
    return { status: 200, body: found ? toRecord(found) : null };
  }

  return [
    {
      method: 'GET',
      pattern: /^\/alive$/,
      body: 'ignored',
      handle: () => ({ status: 200, body: ALIVE_BODY }),
    },
    { method: 'GET', pattern: /^\/health$/, body: 'ignored', handle: () => ({ status: 200, body: 'OK' }) },
    { method: 'POST', pattern: /^\/api\/conversations$/, body: 'required', handle: createConversation },
    { method: 'GET', pattern: /^\/api\/conversations$/, body: 'ignored', handle: searchConversations },
    { method: 'GET', pattern: CONVERSATION_PATH, body: 'ignored', handle: getConversation },
    ...createHistoryRoutes(deps),
    ...createWorkspaceRoutes(deps),
    {
      method: 'POST',
      pattern: /^\/api\/unset-provider-tokens$/,

      body: 'ignored',
      handle: (request) => {
        providerTokens.clearProviderTokens(request.tenant);
        return { status: 200, body: { message: 'Unset Git provider tokens' } };
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/add-git-providers$/,

      body: 'required',
      handle: (request) => {
        const validated = validateAddGitProviders(request.body);
        if (!validated.ok) return validationError(validated.issues);
        const tokens: Partial<Record<GitProviderValue, ProviderToken>> = {};
        for (const [provider, value] of Object.entries(validated.value.provider_tokens)) {
          if (value) tokens[provider as GitProviderValue] = { token: value.token, host: value.host ?? null };
        }
        providerTokens.setProviderTokens(request.tenant, tokens);
        return { status: 200, body: { message: 'Git providers stored' } };
      },
    },
  ];
}

function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    (error as { code: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}
