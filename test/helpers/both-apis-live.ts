/**
 * What the live suites run over both OpenHands APIs need besides test/helpers/both-apis.ts: the
 * subscription by cursor (`after` / `fromBeginning`, which both APIs take; `afterEventId` is V0's), a
 * conversation seeded with a first message, the agent state an answer ends in, the stored history's
 * cursors, and the upstream sockets of a conversation counted in each API's own way.
 *
 *   describe.each(APIS)('... on %s', (api) => {
 *     const id = await seedConversation(api, service.url, { message: 'run: exit 3' });
 *     await stream.until(answered(api, 'hello'));
 *   });
 */
import { expect } from 'vitest';
import { type Api, seedConversations } from './both-apis.ts';
import type { TestGateway } from './gateway.ts';
import { createConversation, numConnections, rest } from './local-service.ts';

/**
 * The conversationEvents subscription with variables `$id`, `$after` (an event cursor) and
 * `$fromBeginning`, selecting `selection` on each event.
 */
export function cursorSubscription(selection: string): string {
  return `subscription Events($id: ID!, $after: String, $fromBeginning: Boolean) {
  conversationEvents(conversationId: $id, after: $after, fromBeginning: $fromBeginning) {
    ${selection.trim()}
  }
}`;
}

/**
 * The agent state the scripted agent ends an answer in: V0's waits for input, V1's ends its run
 * `finished`, as the V1 SDK agent does once it replies without a tool call (src/local-service/v1/answer.ts).
 */
const ANSWERED_STATE: Readonly<Record<Api, string>> = { v0: 'AWAITING_USER_INPUT', v1: 'FINISHED' };

/** The fields {@link answered} reads of each event. */
export interface AnswerFields {
  content?: string | null;
  agentState?: string | null;
}

/**
 * A predicate over a stream's results: the agent has answered `text` (`You said: <text>`) and
 * ended its answer in {@link ANSWERED_STATE}.
 */
export function answered<R extends { data?: { conversationEvents?: AnswerFields } | null }>(
  api: Api,
  text: string,
): (results: R[]) => boolean {
  return (results) => {
    const list = results.map((result) => result.data?.conversationEvents);
    const index = list.findIndex((event) => event?.content === `You said: ${text}`);
    return index >= 0 && list.slice(index).some((event) => event?.agentState === ANSWERED_STATE[api]);
  };
}

/**
 * Creates a conversation straight on the service, with `message` as its first user message when
 * given, and answers its id. V0: one create call; V1: a start task followed until READY (the
 * conversation exists and its sandbox runs when this returns).
 */
export async function seedConversation(
  api: Api,
  url: string,
  { message, key }: { message?: string; key?: string } = {},
): Promise<string> {
  if (message === undefined) return (await seedConversations(api, url, 1, key))[0] as string;
  if (api === 'v0') return createConversation(url, { initial_user_msg: message }, key);
  const started = await rest<{ id: string }>(url, '/api/v1/app-conversations', {
    method: 'POST',
    body: { initial_message: { role: 'user', content: [{ type: 'text', text: message }], run: true } },
    key,
  });
  expect(started.status).toBe(200);
  let conversationId = '';
  await expect
    .poll(
      async () => {
        const read = await rest<Array<{ status: string; app_conversation_id: string | null }>>(
          url,
          `/api/v1/app-conversations/start-tasks?ids=${started.body.id}`,
          { key },
        );
        conversationId = read.body[0]?.app_conversation_id ?? '';
        return read.body[0]?.status;
      },
      { timeout: 5_000, interval: 10 },
    )
    .toBe('READY');
  return conversationId;
}

/** Every stored event's cursor, in the stored order, read through the graph's history connection. */
export async function storedCursors(gateway: TestGateway, id: string, key?: string): Promise<string[]> {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'x-session-api-key': key }),
    },
    body: JSON.stringify({
      query: `query($id: ID!) { conversation(id: $id) { events(first: 100) { edges { cursor } } } }`,
      variables: { id },
    }),
  });
  const answer = (await response.json()) as {
    data?: { conversation: { events: { edges: Array<{ cursor: string }> } } | null };
    errors?: unknown;
  };
  expect(answer.errors).toBeUndefined();
  return answer.data?.conversation?.events.edges.map((edge) => edge.cursor) ?? [];
}

/**
 * The cursors of the stored events a stream delivered, in its order, leaving out the live-only
 * events without an id of their own (status updates, errors: each carries the cursor of the stored
 * event before it, docs/live-events.md). V0 marks them with a null `eventId`. On V1 every event the
 * agent server sends carries its own id and is stored, so none is left out: a repeated cursor there is
 * an event delivered twice.
 */
export function storedEventCursors(
  api: Api,
  events: ReadonlyArray<{ cursor: string; eventId: number | null }>,
): string[] {
  return events.filter((event) => api === 'v1' || event.eventId !== null).map((event) => event.cursor);
}

/**
 * The upstream sockets open on the conversation. V0: the number the V0 service counts on the
 * conversation (`num_connections`), a count the gateway does not make itself. V1: its agent servers
 * count no connections (`numConnections` is 0 there, docs/upstream-apis.md), so the gateway's own
 * count of agent-server sockets (`liveStats()`; one conversation per test).
 */
export async function upstreamSockets(
  api: Api,
  serviceUrl: string,
  gateway: TestGateway,
  id: string,
  key?: string,
): Promise<number> {
  if (api === 'v0') return numConnections(serviceUrl, id, key);
  return gateway.gateway.liveStats().upstreamSockets;
}

/**
 * What a conversation needs after the service restarted to stream again: nothing on V0; on V1 its
 * sandbox, which a restart leaves PAUSED (no listener survives it), is resumed.
 */
export async function resumeAfterRestart(api: Api, url: string, id: string, key?: string): Promise<void> {
  if (api === 'v0') return;
  const read = await rest<Array<{ sandbox_id: string } | null>>(url, `/api/v1/app-conversations?ids=${id}`, {
    key,
  });
  const sandboxId = read.body[0]?.sandbox_id;
  expect(sandboxId).toEqual(expect.any(String));
  const resumed = await rest(url, `/api/v1/sandboxes/${sandboxId}/resume`, { method: 'POST', key });
  expect(resumed.status).toBe(200);
}
