/**
 * V1 lifecycle and talking to the agent, by REST: start and stop resume and pause the conversation's
 * whole sandbox on the app server (every conversation in it, the agent server with them); messages
 * and agent-state requests go to the conversation's agent server with its key.
 */

import { QUALIFIED_EVENT_KINDS } from '../../contract/v1/events.ts';
import { UpstreamRejection, unexpectedAnswer } from '../failures.ts';
import { ConversationNotFoundError } from '../port/errors.ts';
import type { ConversationEvent } from '../port/events.ts';
import type { OutgoingMessage } from '../port/upstream.ts';
import type { RequestableAgentStateValue } from '../port/vocabulary.ts';
import { utcOfDate } from '../timestamps.ts';
import { mapV1Event } from './events.ts';
import { type CallScope, call, withRejections } from './scope.ts';

/** POST /api/v1/sandboxes/{id}/resume or /pause: false when the app server does not know the sandbox. */
export async function setSandbox(
  scope: CallScope,
  sandboxId: string,
  action: 'resume' | 'pause',
): Promise<boolean> {
  try {
    await call<unknown>(scope, {
      method: 'POST',
      path: `/api/v1/sandboxes/${encodeURIComponent(sandboxId)}/${action}`,
      route: `POST /api/v1/sandboxes/{id}/${action}`,
      passThroughStatuses: [404],
    });
    return true;
  } catch (error) {
    if (error instanceof UpstreamRejection) return false;
    throw error;
  }
}

/** POST <conversation>/events with `"run": true` (the route's default is false: the agent would not start). */
export async function postMessage(
  scope: CallScope,
  basePath: string,
  conversationId: string,
  message: OutgoingMessage,
): Promise<void> {
  const content: unknown[] = [{ type: 'text', text: message.content }];
  if (message.imageUrls.length > 0) content.push({ type: 'image', image_urls: message.imageUrls });
  await withRejections(
    [],
    () =>
      call<unknown>(scope, {
        method: 'POST',
        path: `${basePath}/events`,
        route: 'POST /api/conversations/{id}/events (agent server)',
        body: { role: 'user', content, run: true },
        passThroughStatuses: [404],
      }),
    () => new ConversationNotFoundError(conversationId),
  );
}

/**
 * The stored echo of a message just sent: the newest user MessageEvent with that text (the agent
 * server answers the POST with `{"success":true}` only). Null when it is not among the newest ten.
 */
export async function findEcho(
  scope: CallScope,
  basePath: string,
  content: string,
): Promise<Extract<ConversationEvent, { kind: 'USER_MESSAGE' }> | null> {
  const query = new URLSearchParams({
    kind: QUALIFIED_EVENT_KINDS.MessageEvent,
    source: 'user',
    sort_order: 'TIMESTAMP_DESC',
    limit: '10',
  });
  const body = await call<{ items?: unknown }>(scope, {
    method: 'GET',
    path: `${basePath}/events/search?${query}`,
    route: 'GET /api/conversations/{id}/events/search (agent server)',
  });
  if (!body || !Array.isArray(body.items)) throw unexpectedAnswer();
  for (const raw of body.items) {
    const event = mapV1Event(raw, scope.client.timeZone);
    if (event?.kind === 'USER_MESSAGE' && event.content === content) return event;
  }
  return null;
}

/** The agent-server route of each requestable state; `stopped` has none in V1: pausing is nearest. */
function routeOf(state: RequestableAgentStateValue): { path: string; body?: unknown } {
  switch (state) {
    case 'running':
      return { path: '/run' };
    case 'user_confirmed':
      return { path: '/events/respond_to_confirmation', body: { accept: true, reason: '' } };
    case 'user_rejected':
      return {
        path: '/events/respond_to_confirmation',
        body: { accept: false, reason: 'User rejected the action.' },
      };
    default:
      return { path: '/pause' };
  }
}

/**
 * Asks the agent server for `state` and answers the request as an event (V1 stores none for most of
 * them and its echo comes only on the socket): source `user`, no id, the route's answer in `raw`,
 * placed after the newest stored event by `cursor`.
 * A `run` on a conversation already running (409) is what was asked for, not a failure.
 */
export async function requestAgentState(
  scope: CallScope,
  basePath: string,
  conversationId: string,
  state: RequestableAgentStateValue,
  cursor: () => Promise<string>,
): Promise<ConversationEvent> {
  const { path, body } = routeOf(state);
  const send = async (): Promise<unknown> => {
    try {
      return await call<unknown>(scope, {
        method: 'POST',
        path: `${basePath}${path}`,
        route: `POST /api/conversations/{id}${path} (agent server)`,
        ...(body === undefined ? {} : { body }),
        passThroughStatuses: [400, 404, 409],
      });
    } catch (error) {
      if (error instanceof UpstreamRejection && error.status === 409 && state === 'running') {
        return { success: true, alreadyRunning: true };
      }
      throw error;
    }
  };
  // The agent server answers an unknown conversation 400 on pause and 404 elsewhere.
  const answer = await withRejections([], send, (status) =>
    status === 400 || status === 404 ? new ConversationNotFoundError(conversationId) : undefined,
  );
  return {
    eventId: null,
    cursor: await cursor(),
    timestamp: utcOfDate(new Date()),
    source: 'user',
    message: '',
    cause: null,
    phase: 'ACTION',
    upstreamKind: `POST ${path}`,
    raw: Object.freeze({ requested: state, answer }),
    kind: 'AGENT_STATE_CHANGE_REQUESTED',
    requestedState: state,
    stateRaw: state,
  };
}

/**
 * The message as sent, when its stored copy was not found among the newest (no id, no timestamp),
 * placed after the newest stored event.
 */
export function unstoredEcho(
  message: OutgoingMessage,
  cursor: string,
): Extract<ConversationEvent, { kind: 'USER_MESSAGE' }> {
  return {
    eventId: null,
    cursor,
    timestamp: null,
    source: 'user',
    message: message.content,
    cause: null,
    phase: 'ACTION',
    upstreamKind: 'MessageEvent',
    raw: Object.freeze({}),
    kind: 'USER_MESSAGE',
    content: message.content,
    imageUrls: [...message.imageUrls],
    fileUrls: [],
  };
}
