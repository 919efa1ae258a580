/**
 * The history and lifecycle routes of one conversation, as the real OpenHands 0.53 server answers them
 * (OpenHands 0.53.0 `openhands/server/routes/conversation.py`, `manage_conversations.py`;
 * docs/upstream-facts.md, "V0: history and lifecycle routes"):
 *
 *   GET    /api/conversations/{id}/events   page through the stored events
 *   POST   /api/conversations/{id}/events   add a user action, like the socket's oh_user_action
 *   DELETE /api/conversations/{id}          stop, disconnect, delete with all events: true / false
 *   PATCH  /api/conversations/{id}          rename: true, and a live title status update
 *   POST   /api/conversations/{id}/start    start the agent loop unless it runs
 *   POST   /api/conversations/{id}/stop     stop the agent loop if it runs
 *
 * Tenancy: a conversation belongs to the tenant (key) that created it. Another tenant's conversation is
 * answered exactly like an unknown one, except by PATCH, whose 403 the real server defines for it.
 * Where the real server would answer 500 (an action it cannot parse, a body that is not JSON), these
 * routes answer a FastAPI-shaped 422 instead.
 */
import type {
  AddEventResponseRecord,
  ConversationEventsPageRecord,
  DetailErrorRecord,
  StartConversationNotFoundRecord,
  StartConversationResponseRecord,
  StopConversationResponseRecord,
  UpdateConversationErrorRecord,
} from '../../contract/v0/history-records.ts';
import { type ApiRequest, type ApiResponse, json, type Route, validationError } from '../api-route.ts';
import type { RouteDeps } from './seams.ts';
import { MAX_EVENTS_LIMIT, MIN_EVENTS_LIMIT, validateEventsQuery } from './validation/events-query.ts';
import { validateUpdateConversation } from './validation/rename-body.ts';
import { validateStartConversation } from './validation/start-body.ts';
import { validateUserActionBody } from './validation/user-action.ts';

/** `/api/conversations/{id}/events`. */
const EVENTS_PATH = /^\/api\/conversations\/([^/]+)\/events$/;
/** `/api/conversations/{id}`. */
const CONVERSATION_PATH = /^\/api\/conversations\/([^/]+)$/;
const START_PATH = /^\/api\/conversations\/([^/]+)\/start$/;
const STOP_PATH = /^\/api\/conversations\/([^/]+)\/stop$/;

/**
 * The 404 of every route depending on the conversation (`get_conversation`: events, workspace), unlike
 * GET by id's 200 null.
 */
export function eventsNotFound(conversationId: string): ApiResponse {
  const body: DetailErrorRecord = { detail: `Conversation ${conversationId} not found` };
  return json(404, body);
}

const RENAME_NOT_FOUND: UpdateConversationErrorRecord = {
  status: 'error',
  message: 'Conversation not found',
  msg_id: 'CONVERSATION$NOT_FOUND',
};

const RENAME_FORBIDDEN: UpdateConversationErrorRecord = {
  status: 'error',
  message: 'Permission denied: You can only update your own conversations',
  msg_id: 'AUTHORIZATION$PERMISSION_DENIED',
};

/** Builds the history and lifecycle routes bound to the store and runtime. */
export function createHistoryRoutes(deps: RouteDeps): Route[] {
  const { store, runtime } = deps;
  const now = deps.now ?? Date.now;

  const idOf = (request: ApiRequest) => request.params[0] ?? '';
  const owns = (request: ApiRequest) => store.getConversation(request.tenant, idOf(request));

  function searchEvents(request: ApiRequest): ApiResponse {
    const conversationId = idOf(request);
    // FastAPI resolves the conversation dependency before it validates the endpoint's query.
    if (!owns(request)) return eventsNotFound(conversationId);
    const validated = validateEventsQuery(request.query);
    if (!validated.ok) return validationError(validated.issues);
    const { startId, endId, reverse, limit } = validated.value;
    if (limit < MIN_EVENTS_LIMIT || limit > MAX_EVENTS_LIMIT) {
      const body: DetailErrorRecord = { detail: 'Invalid limit' };
      return json(400, body);
    }
    // One more than asked tells whether more exist that way, as the real server's limit + 1 read does
    // (so limit=0 answers no events and has_more = whether any event lies within the bounds).
    const found = store.searchEvents(request.tenant, conversationId, {
      startId,
      endId,
      reverse,
      limit: limit + 1,
    });
    const body: ConversationEventsPageRecord = {
      events: found.slice(0, limit),
      has_more: found.length > limit,
    };
    return json(200, body);
  }

  function addEvent(request: ApiRequest): ApiResponse {
    const conversationId = idOf(request);
    // The real server finds the conversation (404) before it reads the body.
    if (!owns(request)) return eventsNotFound(conversationId);
    if (request.bodyProblem) return request.bodyProblem;
    const validated = validateUserActionBody(request.body);
    if (!validated.ok) return validationError(validated.issues);
    const result = runtime.acceptUserAction(request.tenant, conversationId, request.body);
    if (!result.ok) {
      // Only a shutdown gets here: the body passed the same checks as the runtime's own.
      return json(503, { detail: 'Service Unavailable' });
    }
    const body: AddEventResponseRecord = { success: true };
    return json(200, body);
  }

  function deleteConversation(request: ApiRequest): ApiResponse {
    const conversationId = idOf(request);
    if (!owns(request)) return json(200, false);
    // Stop and disconnect first, in this same turn, so no socket or agent step touches it afterwards;
    // the store then removes the record and its events in one committed transaction before `true`.
    runtime.remove(request.tenant, conversationId);
    return json(200, store.deleteConversation(request.tenant, conversationId));
  }

  function renameConversation(request: ApiRequest): ApiResponse {
    const validated = validateUpdateConversation(request.body);
    if (!validated.ok) return validationError(validated.issues);
    const conversationId = idOf(request);
    if (!owns(request)) {
      return store.conversationIdExists(conversationId)
        ? json(403, RENAME_FORBIDDEN)
        : json(404, RENAME_NOT_FOUND);
    }
    const { title } = validated.value;
    store.updateConversation(request.tenant, conversationId, {
      title,
      lastUpdatedAt: new Date(now()).toISOString(),
    });
    runtime.announceTitle(request.tenant, conversationId, title);
    return json(200, true);
  }

  function startConversation(request: ApiRequest): ApiResponse {
    const validated = validateStartConversation(request.body);
    if (!validated.ok) return validationError(validated.issues);
    const conversationId = idOf(request);
    if (!owns(request)) {
      const body: StartConversationNotFoundRecord = { status: 'error', conversation_id: conversationId };
      return json(404, body);
    }
    // providers_set is accepted and checked but unused: the deterministic agent clones nothing.
    const { alreadyRunning } = runtime.start(request.tenant, conversationId);
    const current = alreadyRunning ? owns(request)?.status : 'STARTING';
    const body: StartConversationResponseRecord = {
      status: 'ok',
      conversation_id: conversationId,
      conversation_status: current === 'STARTING' ? 'STARTING' : 'RUNNING',
    };
    return json(200, body);
  }

  function stopConversation(request: ApiRequest): ApiResponse {
    const conversationId = idOf(request);
    const conversation = owns(request);
    // Like the real server, an unknown id is simply "not running" (no 404); so is another tenant's.
    const running = conversation !== undefined && runtime.isRunning(request.tenant, conversationId);
    const before = running ? conversation.status : 'STOPPED';
    if (running) runtime.stop(request.tenant, conversationId);
    const body: StopConversationResponseRecord = {
      status: 'ok',
      conversation_id: conversationId,
      message: running ? 'Conversation stopped successfully' : 'Conversation was not running',
      conversation_status: before,
    };
    return json(200, body);
  }

  return [
    { method: 'GET', pattern: EVENTS_PATH, body: 'ignored', handle: searchEvents },
    { method: 'POST', pattern: EVENTS_PATH, body: 'deferred', handle: addEvent },
    { method: 'DELETE', pattern: CONVERSATION_PATH, body: 'ignored', handle: deleteConversation },
    { method: 'PATCH', pattern: CONVERSATION_PATH, body: 'required', handle: renameConversation },
    { method: 'POST', pattern: START_PATH, body: 'required', handle: startConversation },
    { method: 'POST', pattern: STOP_PATH, body: 'ignored', handle: stopConversation },
  ];
}
