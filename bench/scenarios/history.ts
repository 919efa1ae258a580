/**
 * Scenario: reading the newest 50 events of a 1,000-event conversation (the chat view's first query),
 * `conversation(id:) { events(last: 50) }` through the gateway vs
 * `GET /api/conversations/{id}/events?reverse=true&limit=50` directly, at one connection (added
 * latency) and at saturation (throughput ratio). The gateway side makes two upstream calls (the
 * conversation record, then the events page): `events` is a field of the Conversation node.
 */
import { type BenchContext, graphqlTarget, restTarget } from '../lib/context.ts';
import { compareGatewayWithDirect } from '../lib/http-comparison.ts';
import type { HttpTarget } from '../lib/http-load.ts';
import type { ScenarioResult } from '../lib/report.ts';

const EVENT_COUNT = 1000;
const PAGE = 50;

const HISTORY_QUERY = `query BenchHistory($id: ID!) {
  conversation(id: $id) {
    events(last: ${PAGE}) {
      edges { cursor node { __typename eventId timestamp source message upstreamKind
        ... on AgentStateChangeRequestedEvent { requestedState requestedStateRaw } } }
      pageInfo { hasPreviousPage startCursor }
    }
  }
}`;

async function post(context: BenchContext, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${context.serviceUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': context.key },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`seeding ${path} answered ${response.status}`);
}

/**
 * A conversation with at least 1,000 stored events, seeded fast: once stopped, each
 * `change_agent_state: stopped` posted to the events route stores just its echo (no agent step).
 */
export async function seedHistory(context: BenchContext): Promise<string> {
  const response = await fetch(`${context.serviceUrl}/api/conversations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': context.key },
    body: '{}',
  });
  const { conversation_id: id } = (await response.json()) as { conversation_id: string };
  await post(context, `/api/conversations/${id}/stop`, undefined);
  const action = { action: 'change_agent_state', args: { agent_state: 'stopped' } };
  for (let i = 0; i < EVENT_COUNT; i += 20) {
    await Promise.all(
      Array.from({ length: 20 }, () => post(context, `/api/conversations/${id}/events`, action)),
    );
  }
  return id;
}

/** The two targets of the history scenario (also used by bench/ab.ts). */
export function historyTargets(
  context: BenchContext,
  id: string,
): { gateway: HttpTarget; direct: HttpTarget } {
  return {
    gateway: graphqlTarget(context, HISTORY_QUERY, { id }, (data) => {
      const events = (data.conversation as { events: { edges: unknown[] } } | null)?.events;
      if (events?.edges.length !== PAGE)
        throw new Error(`expected ${PAGE} edges, got ${JSON.stringify(data).slice(0, 200)}`);
    }),
    direct: restTarget(
      context,
      'GET',
      `/api/conversations/${id}/events?reverse=true&limit=${PAGE}`,
      undefined,
      (body) => {
        const events = (body as { events: unknown[] }).events;
        if (events.length !== PAGE) throw new Error(`expected ${PAGE} events, got ${events.length}`);
      },
    ),
  };
}

/** Runs the history scenario. */
export async function runHistory(context: BenchContext): Promise<ScenarioResult> {
  const id = await seedHistory(context);
  return compareGatewayWithDirect(context, 'history', historyTargets(context, id));
}
