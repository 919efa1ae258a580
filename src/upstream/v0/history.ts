/**
 * V0's typed REST calls of a conversation's history and lifecycle: read a page of stored events, add a
 * user action, delete, rename, start and stop. Wire bodies (src/contract/v0/history-records.ts) stop here;
 * callers get camelCase values, mapped events (the same mapper as the socket's) and outcome classes
 * they can branch on. Every call goes through the shared UpstreamClient, so errors, timeouts, the
 * circuit breaker and retries (reads only) are the same as for every other route.
 */

import type {
  AddEventRequestRecord,
  AddEventResponseRecord,
  ConversationEventsPageRecord,
  StartConversationRequestRecord,
  StartConversationResponseRecord,
  StopConversationResponseRecord,
  UpdateConversationRequestRecord,
} from '../../contract/v0/history-records.ts';
import { UpstreamError, unexpectedAnswer } from '../failures.ts';
import type { StartedConversation, StoppedConversation } from '../port/conversation.ts';
import { ConversationNotFoundError, PermissionDeniedError } from '../port/errors.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { GitProviderValue } from '../port/vocabulary.ts';
import { withRejections } from '../rejection-errors.ts';
import { readableRejection, secretsOf } from '../rejection-message.ts';
import type { CallScope } from './conversations.ts';
import { mapUpstreamEvent } from './events.ts';

/** One bounded read of stored events (inclusive ids), as the events route takes it. */
export interface EventsQuery {
  /** First id read forward / lowest id read backward. @default 0 */
  startId?: number;
  /** Last id read forward / first id read backward; null = the newest. */
  endId?: number | null;
  /** Newest first. */
  reverse: boolean;
  /** 0..100; 0 only asks `hasMore` (whether any event lies within the bounds). */
  limit: number;
}

/** One page as the upstream cut it, events mapped; `rawIds` keeps each raw event's id (null when it had none). */
export interface EventsPage {
  events: ConversationEvent[];
  /** Id of every raw event in upstream order, also of ones that did not map (for walking on). */
  rawIds: Array<number | null>;
  hasMore: boolean;
}

const path = (conversationId: string, suffix = '') =>
  `/api/conversations/${encodeURIComponent(conversationId)}${suffix}`;

/**
 * GET /api/conversations/{id}/events. Events are mapped with the socket's mapper, so REST and live
 * events are the same objects; raw payloads that are not objects are dropped, like the socket drops them.
 * @throws ConversationNotFoundError for the route's 404
 */
export async function fetchEventsPage(
  scope: CallScope,
  conversationId: string,
  query: EventsQuery,
  timeZone: string,
): Promise<EventsPage> {
  const params = new URLSearchParams({
    start_id: String(query.startId ?? 0),
    reverse: query.reverse ? 'true' : 'false',
    limit: String(query.limit),
  });
  // An empty `end_id=` is a 422 upstream: leave it out for "the newest".
  if (query.endId != null) params.set('end_id', String(query.endId));
  const body = await withRejections(
    [],
    () =>
      scope.client.request<ConversationEventsPageRecord>({
        method: 'GET',
        path: `${path(conversationId, '/events')}?${params}`,
        credentials: scope.credentials,
        signal: scope.signal,
        passThroughStatuses: [404, 405],
      }),
    (status, rejected) =>
      status === 404 && isConversationNotFound(rejected)
        ? new ConversationNotFoundError(conversationId)
        : // A generic 404 or a 405 is the path itself: an older server without the route, not a missing
          // conversation (the same rule as the subscription's catch-up, stored-events.ts).
          new UpstreamError('UPSTREAM_ERROR', 'The conversation service has no stored events route.'),
  );
  if (!body || !Array.isArray(body.events) || typeof body.has_more !== 'boolean') throw unexpectedAnswer();
  const events: ConversationEvent[] = [];
  const rawIds: Array<number | null> = [];
  for (const raw of body.events as unknown[]) {
    const id = (raw as { id?: unknown } | null)?.id;
    rawIds.push(typeof id === 'number' && Number.isInteger(id) ? id : null);
    const event = mapUpstreamEvent(raw, timeZone);
    if (event) events.push(event);
  }
  return { events, rawIds, hasMore: body.has_more };
}

/**
 * POST /api/conversations/{id}/events: adds a user action the way the socket's `oh_user_action` does.
 * The upstream answers only `{success:true}`; the stored event arrives on the socket and the events route.
 * @throws ConversationNotFoundError (404), UpstreamValidationError (422)
 */
export async function postUserAction(
  scope: CallScope,
  conversationId: string,
  action: AddEventRequestRecord,
): Promise<void> {
  const body = await writeConversation<AddEventResponseRecord>(scope, conversationId, {
    method: 'POST',
    path: path(conversationId, '/events'),
    body: action,
  });
  if (body?.success !== true) throw unexpectedAnswer();
}

/**
 * DELETE /api/conversations/{id}: stops, disconnects and deletes it with its events.
 * @throws ConversationNotFoundError when the upstream answers `false` (unknown or not the caller's)
 */
export async function deleteConversation(scope: CallScope, conversationId: string): Promise<void> {
  const body = await scope.client.request<unknown>({
    method: 'DELETE',
    path: path(conversationId),
    credentials: scope.credentials,
    signal: scope.signal,
  });
  if (body === false) throw new ConversationNotFoundError(conversationId);
  if (body !== true) throw unexpectedAnswer();
}

/**
 * PATCH /api/conversations/{id} `{title}`.
 * @throws UpstreamValidationError (422), ConversationNotFoundError (404), PermissionDeniedError (403)
 */
export async function renameConversation(
  scope: CallScope,
  conversationId: string,
  title: string,
): Promise<void> {
  const request: UpdateConversationRequestRecord = { title };
  const body = await writeConversation<unknown>(
    scope,
    conversationId,
    { method: 'PATCH', path: path(conversationId), body: request },
    true,
  );
  if (body !== true) throw unexpectedAnswer();
}

/**
 * POST /api/conversations/{id}/start `{providers_set}`.
 * @throws UpstreamValidationError (422), ConversationNotFoundError (404)
 */
export async function startConversation(
  scope: CallScope,
  conversationId: string,
  providers: GitProviderValue[] | null,
): Promise<StartedConversation> {
  // A provider 0.53 does not know (V1's azure_devops) is sent as given: V0 answers it with a 422, which
  // reaches the caller as UPSTREAM_VALIDATION.
  const request = { providers_set: providers } as StartConversationRequestRecord;
  const body = await writeConversation<StartConversationResponseRecord>(scope, conversationId, {
    method: 'POST',
    path: path(conversationId, '/start'),
    body: request,
  });
  if (!body || typeof body.conversation_status !== 'string') throw unexpectedAnswer();
  return { conversationStatus: body.conversation_status };
}

/**
 * POST /api/conversations/{id}/stop. The upstream answers "not running" (200) also for an unknown id,
 * so the caller checks existence itself.
 */
export async function stopConversation(
  scope: CallScope,
  conversationId: string,
): Promise<StoppedConversation> {
  const body = await scope.client.request<StopConversationResponseRecord>({
    method: 'POST',
    path: path(conversationId, '/stop'),
    credentials: scope.credentials,
    signal: scope.signal,
  });
  if (!body || typeof body.conversation_status !== 'string') throw unexpectedAnswer();
  return {
    wasRunning: body.message === 'Conversation stopped successfully',
    statusBefore: body.conversation_status,
  };
}

/**
 * A write to one conversation whose refusals a client can act on (rejection-errors.ts): 404 ->
 * ConversationNotFoundError, 422 -> UpstreamValidationError (or UpstreamDomainError for a readable
 * reason) and, with `ownership` (rename), 403 -> PermissionDeniedError with the upstream's msg_id.
 * Messages are scrubbed of the caller's secrets; any other rejection is an UPSTREAM_ERROR.
 */
function writeConversation<T>(
  scope: CallScope,
  conversationId: string,
  write: { method: 'POST' | 'PATCH'; path: string; body: unknown },
  ownership = false,
): Promise<T> {
  const secrets = secretsOf(scope.credentials, write.body);
  return withRejections(
    secrets,
    () =>
      scope.client.request<T>({
        ...write,
        credentials: scope.credentials,
        signal: scope.signal,
        passThroughStatuses: ownership ? [403, 404, 422] : [404, 422],
      }),
    (status, body) => {
      if (status === 404) return new ConversationNotFoundError(conversationId);
      if (ownership && status === 403) {
        const msgId = readableRejection(body, secrets)?.msgId;
        return new PermissionDeniedError(conversationId, msgId ?? 'AUTHORIZATION$PERMISSION_DENIED');
      }
      return undefined;
    },
  );
}

/**
 * The events route's own 404, `{"detail":"Conversation <id> not found"}`. A server without the route
 * answers its path with a generic `{"detail":"Not Found"}` (or 405) instead; the body tells them apart.
 */
export function isConversationNotFound(body: unknown): boolean {
  const detail = (body as { detail?: unknown } | null)?.detail;
  return typeof detail === 'string' && /^Conversation \S+ not found$/.test(detail);
}
