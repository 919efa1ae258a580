/**
 * Scenario: reading the newest 50 events of a 1,000-event conversation (the chat view's first query),
 * `conversation(id:) { events(last: 50) }` through the gateway vs the upstream's own newest-50 read
 * directly, at one connection (added latency) and at saturation (throughput ratio):
 * - V0: `GET /api/conversations/{id}/events?reverse=true&limit=50` on the service;
 * - V1: the agent server's `GET {conversation_url}/events/search?sort_order=TIMESTAMP_DESC&limit=50`
 *   with the sandbox's `session_api_key` as `X-Session-API-Key` (where the gateway reads a running
 *   conversation's history, src/upstream/v1/history.ts).
 * The gateway side makes two upstream calls (the conversation record, then the events page): `events`
 * is a field of the Conversation node. Floor: bench/floors/history-floor.ts, the same two calls, the
 * page parsed, mapped and serialized in plain Node; its answer must be the gateway's byte for byte.
 */
import { type BenchContext, graphqlTarget, restTarget, upstreamTarget } from '../lib/context.ts';
import { compareGatewayWithDirect } from '../lib/http-comparison.ts';
import type { HttpTarget } from '../lib/http-load.ts';
import { spawnFloor } from '../lib/processes.ts';
import type { ScenarioResult } from '../lib/report.ts';
import { sameBytes } from '../lib/same-bytes.ts';
import { gatewayUpstreamCalls } from '../lib/upstream-calls.ts';
import { startV1Conversations, type V1Agent, v1AgentOf, v1Message } from '../lib/v1-upstream.ts';
import { createConversation } from './fanout.ts';

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

/** The seeded conversation; on V1 with its agent server (where the direct read goes). */
export interface HistoryConversation {
  id: string;
  agent: V1Agent | null;
}

async function post(url: string, key: string, body: string | undefined): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-api-key': key },
    ...(body === undefined ? {} : { body }),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`seeding ${url} answered ${response.status}`);
}

/** Posts `body` to `url` {@link EVENT_COUNT} times, 20 in flight. */
async function postMany(url: string, key: string, body: string): Promise<void> {
  for (let i = 0; i < EVENT_COUNT; i += 20) {
    await Promise.all(Array.from({ length: 20 }, () => post(url, key, body)));
  }
}

/**
 * A conversation with at least 1,000 stored events, seeded fast, with no agent step:
 * - V0: once stopped, each `change_agent_state: stopped` posted to the events route stores just its echo;
 * - V1: each user message posted to the agent server's `POST .../events` with `"run": false` is appended
 *   and nothing runs (the agent server's default; the conversation stays idle in the run's sandbox).
 */
export async function seedHistory(context: BenchContext): Promise<HistoryConversation> {
  if (context.api === 'v1') {
    const { ids } = await startV1Conversations(context.serviceUrl, context.key, 1, context.sandboxId);
    const id = ids[0] as string;
    const agent = await v1AgentOf(context.serviceUrl, context.key, id);
    await postMany(`${agent.conversationUrl}/events`, agent.sessionApiKey, v1Message('seeded', false));
    return { id, agent };
  }
  const id = await createConversation(context);
  await post(`${context.serviceUrl}/api/conversations/${id}/stop`, context.key, undefined);
  const action = { action: 'change_agent_state', args: { agent_state: 'stopped' } };
  await postMany(`${context.serviceUrl}/api/conversations/${id}/events`, context.key, JSON.stringify(action));
  return { id, agent: null };
}

/** The two targets of the history scenario (also used by bench/ab.ts). */
export function historyTargets(
  context: BenchContext,
  seeded: HistoryConversation,
): { gateway: HttpTarget; direct: HttpTarget } {
  const { id, agent } = seeded;
  const checkPage = (entries: unknown[] | undefined, what: string) => {
    if (entries?.length !== PAGE) throw new Error(`expected ${PAGE} ${what}, got ${entries?.length}`);
  };
  return {
    gateway: graphqlTarget(context, HISTORY_QUERY, { id }, (data) => {
      const events = (data.conversation as { events: { edges: unknown[] } } | null)?.events;
      if (events?.edges.length !== PAGE)
        throw new Error(`expected ${PAGE} edges, got ${JSON.stringify(data).slice(0, 200)}`);
    }),
    direct:
      agent === null
        ? restTarget(
            context,
            'GET',
            `/api/conversations/${id}/events?reverse=true&limit=${PAGE}`,
            undefined,
            (body) => checkPage((body as { events?: unknown[] }).events, 'events'),
          )
        : upstreamTarget(
            `${agent.conversationUrl}/events/search?sort_order=TIMESTAMP_DESC&limit=${PAGE}`,
            agent.sessionApiKey,
            'GET',
            undefined,
            (body) => checkPage((body as { items?: unknown[] }).items, 'items'),
          ),
  };
}

/** The gateway's upstream calls for the document (as its metrics name them), which the floor makes too. */
const GATEWAY_CALLS = {
  v0: ['GET /api/conversations/:id', 'GET /api/conversations/:id/events'],
  v1: ['GET /api/conversations/:id/events/search', 'GET /api/v1/app-conversations'],
} as const;

/**
 * Runs the history scenario, with the floor of bench/floors/history-floor.ts in its own process, sent the
 * gateway's own request. Before anything is measured: the gateway must still make the calls the floor
 * makes, and the floor's answer must be the gateway's, byte for byte (else the scenario throws: a floor
 * that answers something else measures nothing).
 */
export async function runHistory(context: BenchContext): Promise<ScenarioResult> {
  const targets = historyTargets(context, await seedHistory(context));
  const floor = await spawnFloor('history', context.serviceUrl, { api: context.api });
  try {
    await checkFloor(context, targets.gateway, floor.url);
    return await compareGatewayWithDirect(
      context,
      'history',
      targets,
      // Issue 31: gateway CPU per request within 1.5x of the history floor's, on both APIs.
      { maxCpuVsFloor: { floor: 'reshape', ratio: 1.5 } },
      [{ name: 'reshape', pid: floor.pid, target: floorTarget(targets.gateway, floor.url) }],
    );
  } finally {
    await floor.stop();
  }
}

/** Throws unless the gateway makes the floor's upstream calls and the floor answers the gateway's bytes. */
async function checkFloor(context: BenchContext, gateway: HttpTarget, floorUrl: string): Promise<void> {
  // Once first: what the gateway finds out on first use (its API) is not counted.
  await gatewayUpstreamCalls(context.gatewayUrl, gateway);
  const made = await gatewayUpstreamCalls(context.gatewayUrl, gateway);
  const expected = GATEWAY_CALLS[context.api];
  if (made.join('\n') !== expected.join('\n')) {
    throw new Error(
      `the history floor no longer makes the gateway's upstream calls (update bench/floors/history-floor.ts):\n` +
        `  gateway: ${made.join(', ')}\n  floor:   ${expected.join(', ')}`,
    );
  }
  await sameBytes(gateway, { ...gateway, url: floorUrl }, 'history floor (bench/floors/history-floor.ts)');
}

/** The gateway's request sent to the floor; its answer must hold {@link PAGE} edges. */
function floorTarget(gateway: HttpTarget, url: string): HttpTarget {
  return {
    ...gateway,
    url,
    check(status, body) {
      const edges = (JSON.parse(body) as { data?: { conversation?: { events?: { edges?: unknown[] } } } })
        .data?.conversation?.events?.edges;
      if (status !== 200 || edges?.length !== PAGE)
        throw new Error(`floor answered ${status}: ${body.slice(0, 300)}`);
    },
  };
}
