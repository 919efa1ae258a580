/**
 * The REST routes of one sandbox's agent server (agent server v1.43.1, OpenHands/software-agent-sdk
 * `openhands-agent-server/openhands/agent_server/conversation_router.py` and `event_router.py`;
 * docs/upstream-facts.md, "V1 agent server: REST"), over the conversations of that sandbox only: the
 * http server has already checked the
 * sandbox's key (401 otherwise), so `request.tenant` is the sandbox's owner. Errors word for word:
 * unknown conversation 404 `Not Found` on GET, 400 `Bad Request` on pause/delete, 200 `{"success":false}`
 * on PATCH, 404 `Conversation not found: <dashed id>` on every event route; `limit` over 100 is the
 * real server's assertion 500.
 */
import { randomBytes } from 'node:crypto';
import type { ConversationInfoRecord } from '../../contract/v1/agent-server.ts';
import { EXECUTION_STATUSES, QUALIFIED_EVENT_KINDS, type SdkEventRecord } from '../../contract/v1/events.ts';
import { type ApiRequest, type ApiResponse, json, type Route, validationError } from '../api-route.ts';
import { issue } from '../validation/issue.ts';
import type { V1Agent } from './agent.ts';
import { conversationInfo, dashedUuid, uuidHex } from './conversation-state.ts';
import { utcTimestamp } from './event-factory.ts';
import { readMessage } from './message-body.ts';
import { QueryReader, uuidIssue } from './query.ts';
import type { V1Conversation } from './records.ts';
import type { V1Store } from './store.ts';

/** What the routes of one agent server need. */
export interface AgentRouteDeps {
  sandboxId: string;
  store: V1Store;
  agent: V1Agent;
}

const CONVERSATIONS = '/api/conversations';
const ONE = /^\/api\/conversations\/([^/]+)$/;
const ACTION = (name: string) => new RegExp(`^/api/conversations/([^/]+)/${name}$`);
const EVENTS = /^\/api\/conversations\/([^/]+)\/events$/;
const EVENT_ROUTE = (name: string) => new RegExp(`^/api/conversations/([^/]+)/events/${name}$`);

const SORTS = ['CREATED_AT', 'UPDATED_AT', 'CREATED_AT_DESC', 'UPDATED_AT_DESC'] as const;
const EVENT_SORTS = ['TIMESTAMP', 'TIMESTAMP_DESC'] as const;
const SOURCES = ['agent', 'user', 'environment', 'hook'] as const;
/** Confirmation policies the scripted agent knows; any but NeverConfirm holds every action. */
const POLICIES = ['NeverConfirm', 'AlwaysConfirm', 'ConfirmRisky'];

const SUCCESS = json(200, { success: true });

/** The real server's 500 for a failed assertion (`limit <= 100`, fewer than 100 ids). */
export function assertion500(): ApiResponse {
  return json(500, {
    detail: 'Internal Server Error',
    exception: '',
    error_id: randomBytes(16).toString('hex'),
  });
}

/** Builds one sandbox's agent-server route table. */
export function createAgentRoutes(deps: AgentRouteDeps): Route[] {
  const { store, agent, sandboxId } = deps;

  /** The conversation of this sandbox named by path parameter 0, or a 422 for a non-UUID. */
  function find(
    request: ApiRequest,
  ): { hex: string; conversation: V1Conversation | undefined } | ApiResponse {
    const raw = request.params[0] ?? '';
    const hex = uuidHex(raw);
    if (hex === undefined) return validationError([uuidIssue(['path', 'conversation_id'], raw)]);
    const conversation = store.getConversation(request.tenant, hex);
    return { hex, conversation: conversation?.sandboxId === sandboxId ? conversation : undefined };
  }

  function inSandbox(tenant: string): V1Conversation[] {
    return store.conversationsInSandbox(sandboxId).filter((c) => c.tenant === tenant);
  }

  function searchConversations(request: ApiRequest): ApiResponse {
    const q = new QueryReader(request.query);
    const pageId = q.string('page_id');
    const limit = q.int('limit', 100, { gt: 0 });
    const status = q.enumValue('status', EXECUTION_STATUSES, null);
    const sort = q.enumValue('sort_order', SORTS, 'CREATED_AT_DESC');
    q.bool('include_skills', false);
    if (q.issues.length > 0) return validationError(q.issues);
    if (limit > 100) return assertion500();
    const field = sort.startsWith('UPDATED') ? 'updatedAt' : 'createdAt';
    const items = inSandbox(request.tenant)
      .filter((c) => status === null || c.executionStatus === status)
      .sort((a, b) => (a[field] < b[field] ? -1 : a[field] > b[field] ? 1 : 0));
    if (sort.endsWith('_DESC')) items.reverse();
    // The page id is the hex id of the next page's first item; an unknown one restarts.
    const start = Math.max(0, pageId === null ? 0 : items.findIndex((c) => c.id === uuidHex(pageId)));
    const page = items.slice(start, start + limit);
    const next = items[start + limit];
    return json(200, { items: page.map(conversationInfo), next_page_id: next ? next.id : null });
  }

  function countConversations(request: ApiRequest): ApiResponse {
    const q = new QueryReader(request.query);
    const status = q.enumValue('status', EXECUTION_STATUSES, null);
    if (q.issues.length > 0) return validationError(q.issues);
    return json(
      200,
      inSandbox(request.tenant).filter((c) => status === null || c.executionStatus === status).length,
    );
  }

  function batchGet(request: ApiRequest): ApiResponse {
    const q = new QueryReader(request.query);
    const ids = q.uuids('ids', true);
    if (q.issues.length > 0) return validationError(q.issues);
    if (ids.length >= 100) return assertion500();
    const found: Array<ConversationInfoRecord | null> = ids.map((hex) => {
      const c = store.getConversation(request.tenant, hex);
      return c?.sandboxId === sandboxId ? conversationInfo(c) : null;
    });
    return json(200, found);
  }

  function getOne(request: ApiRequest): ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    return found.conversation
      ? json(200, conversationInfo(found.conversation))
      : json(404, { detail: 'Not Found' });
  }

  function pause(request: ApiRequest): ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    if (!found.conversation) return json(400, { detail: 'Bad Request' });
    agent.pause(request.tenant, found.hex);
    return SUCCESS;
  }

  function interrupt(request: ApiRequest): ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    if (!found.conversation) return json(400, { detail: 'Bad Request' });
    agent.pause(request.tenant, found.hex, 'InterruptEvent');
    return SUCCESS;
  }

  /** The last finish message or agent text, `""` when the agent has said nothing. */
  function finalResponse(request: ApiRequest): ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    if (!found.conversation) return json(404, { detail: 'Not Found' });
    const events = store.listEvents(found.hex, {
      kind: null,
      source: 'agent',
      timestampGte: null,
      timestampLt: null,
    });
    let response = '';
    for (const event of events) {
      if (event.kind === 'ActionEvent' && event.action?.kind === 'FinishAction')
        response = event.action.message;
      if (event.kind === 'MessageEvent') {
        response = event.llm_message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      }
    }
    return json(200, { response });
  }

  function run(request: ApiRequest): ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    if (!found.conversation) return json(404, { detail: 'Not Found' });
    if (agent.run(request.tenant, found.hex) === 'already_running') {
      return json(409, { detail: 'Conversation already running. Wait for completion or pause first.' });
    }
    return SUCCESS;
  }

  function remove(request: ApiRequest): ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    if (!found.conversation) return json(400, { detail: 'Bad Request' });
    agent.forget(request.tenant, found.hex);
    store.deleteConversation(request.tenant, found.hex);
    return SUCCESS;
  }

  function patch(request: ApiRequest): ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    const body = request.body as Record<string, unknown> | undefined;
    const title = body?.title;
    if (title !== undefined && title !== null) {
      if (typeof title !== 'string') {
        return validationError([
          issue('string_type', ['body', 'title'], 'Input should be a valid string', title),
        ]);
      }
      if (title.length < 1) {
        const msg = 'String should have at least 1 character';
        return validationError([issue('string_too_short', ['body', 'title'], msg, title, { min_length: 1 })]);
      }
      if (title.length > 200) {
        const msg = 'String should have at most 200 characters';
        return validationError([
          issue('string_too_long', ['body', 'title'], msg, title, { max_length: 200 }),
        ]);
      }
    }
    if (!found.conversation) return json(200, { success: false });
    if (typeof title === 'string') {
      store.updateConversation(request.tenant, found.hex, { title, updatedAt: utcTimestamp() });
    }
    return SUCCESS;
  }

  /** The events route's conversation, or its 404 (checked before the query, like the real dependency). */
  function eventsOf(request: ApiRequest): { hex: string } | ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    if (!found.conversation) return json(404, { detail: `Conversation not found: ${dashedUuid(found.hex)}` });
    return { hex: found.hex };
  }

  /** The filtered log of a conversation, oldest first, or the 422 of a bad filter. */
  function filtered(hex: string, q: QueryReader): SdkEventRecord[] | undefined {
    const kindText = q.string('kind');
    const source = q.enumValue('source', SOURCES, null);
    const gte = q.datetime('timestamp__gte');
    const lt = q.datetime('timestamp__lt');
    const body = q.string('body');
    if (q.issues.length > 0) return undefined;
    // `kind` is the fully qualified class name; a short one matches nothing, as on the real server.
    const kind =
      kindText === null
        ? null
        : (Object.entries(QUALIFIED_EVENT_KINDS).find(([, qualified]) => qualified === kindText)?.[0] ??
          '\u0000');
    // Aware bounds are converted to server local time, naive ones taken as local already.
    const local = (d: { localText: string } | null) => (d === null ? null : d.localText);
    const events = store.listEvents(hex, { kind, source, timestampGte: local(gte), timestampLt: local(lt) });
    if (body === null) return events;
    const needle = body.toLowerCase();
    return events.filter(
      (e) =>
        e.kind === 'MessageEvent' &&
        e.llm_message.content.some(
          (part) => part.type === 'text' && part.text.toLowerCase().includes(needle),
        ),
    );
  }

  function searchEvents(request: ApiRequest): ApiResponse {
    const target = eventsOf(request);
    if ('status' in target) return target;
    const q = new QueryReader(request.query);
    const pageId = q.string('page_id');
    const limit = q.int('limit', 100, { gt: 0 });
    const sort = q.enumValue('sort_order', EVENT_SORTS, 'TIMESTAMP');
    const events = filtered(target.hex, q);
    if (events === undefined) return validationError(q.issues);
    if (limit > 100) return assertion500();
    if (sort === 'TIMESTAMP_DESC') events.reverse();
    // Inclusive cursor: the id of the next page's first event; an unknown id restarts from the start.
    const start = Math.max(0, pageId === null ? 0 : events.findIndex((e) => e.id === pageId));
    const next = events[start + limit];
    return json(200, { items: events.slice(start, start + limit), next_page_id: next ? next.id : null });
  }

  function countEvents(request: ApiRequest): ApiResponse {
    const target = eventsOf(request);
    if ('status' in target) return target;
    const q = new QueryReader(request.query);
    const events = filtered(target.hex, q);
    return events === undefined ? validationError(q.issues) : json(200, events.length);
  }

  function getEvent(request: ApiRequest): ApiResponse {
    const target = eventsOf(request);
    if ('status' in target) return target;
    const event = store.getEvent(target.hex, request.params[1] ?? '');
    return event ? json(200, event) : json(404, { detail: 'Not Found' });
  }

  function sendMessage(request: ApiRequest): ApiResponse {
    const target = eventsOf(request);
    if ('status' in target) return target;
    if (request.bodyProblem) return request.bodyProblem;
    const message = readMessage(request.body, ['body'], { runDefault: false });
    if (!message.ok) return validationError(message.issues);
    agent.send(request.tenant, target.hex, message.value.content, message.value.run);
    return SUCCESS;
  }

  function respondToConfirmation(request: ApiRequest): ApiResponse {
    const target = eventsOf(request);
    if ('status' in target) return target;
    const body = request.body as Record<string, unknown>;
    if (typeof body !== 'object' || body === null || typeof body.accept !== 'boolean') {
      const input = typeof body === 'object' && body !== null ? body.accept : body;
      const [type, msg] =
        input === undefined
          ? ['missing', 'Field required']
          : ['bool_type', 'Input should be a valid boolean'];
      return validationError([issue(type, ['body', 'accept'], msg, input ?? body)]);
    }
    const reason = typeof body.reason === 'string' ? body.reason : null;
    // Nothing waiting (the policy never asked, or it was answered already): accepted, nothing happens.
    agent.respond(request.tenant, target.hex, body.accept, reason);
    return SUCCESS;
  }

  function setConfirmationPolicy(request: ApiRequest): ApiResponse {
    const found = find(request);
    if ('status' in found) return found;
    const policy = (request.body as { policy?: { kind?: unknown } } | null)?.policy;
    const kind = policy?.kind;
    if (typeof kind !== 'string' || !POLICIES.includes(kind)) {
      const expected = POLICIES.map((p) => `'${p}'`).join(', ');
      const msg = `Input tag '${String(kind)}' found using 'kind' does not match any of the expected tags: ${expected}`;
      return validationError([issue('union_tag_invalid', ['body', 'policy'], msg, policy ?? null)]);
    }
    if (!found.conversation) return json(404, { detail: 'Not Found' });
    agent.setPolicy(request.tenant, found.hex, kind);
    return SUCCESS;
  }

  return [
    {
      method: 'GET',
      pattern: /^\/api\/conversations\/search$/,
      body: 'ignored',
      handle: searchConversations,
    },
    { method: 'GET', pattern: /^\/api\/conversations\/count$/, body: 'ignored', handle: countConversations },
    { method: 'GET', pattern: new RegExp(`^${CONVERSATIONS}$`), body: 'ignored', handle: batchGet },
    { method: 'GET', pattern: EVENT_ROUTE('search'), body: 'ignored', handle: searchEvents },
    { method: 'GET', pattern: EVENT_ROUTE('count'), body: 'ignored', handle: countEvents },
    {
      method: 'POST',
      pattern: EVENT_ROUTE('respond_to_confirmation'),
      body: 'required',
      handle: respondToConfirmation,
    },
    {
      method: 'GET',
      pattern: /^\/api\/conversations\/([^/]+)\/events\/([^/]+)$/,
      body: 'ignored',
      handle: getEvent,
    },
    { method: 'POST', pattern: EVENTS, body: 'deferred', handle: sendMessage },
    { method: 'GET', pattern: ONE, body: 'ignored', handle: getOne },
    { method: 'DELETE', pattern: ONE, body: 'ignored', handle: remove },
    { method: 'PATCH', pattern: ONE, body: 'required', handle: patch },
    { method: 'POST', pattern: ACTION('pause'), body: 'ignored', handle: pause },
    { method: 'POST', pattern: ACTION('run'), body: 'ignored', handle: run },
    { method: 'POST', pattern: ACTION('interrupt'), body: 'ignored', handle: interrupt },
    {
      method: 'POST',
      pattern: ACTION('confirmation_policy'),
      body: 'required',
      handle: setConfirmationPolicy,
    },
    { method: 'GET', pattern: ACTION('agent_final_response'), body: 'ignored', handle: finalResponse },
  ];
}
