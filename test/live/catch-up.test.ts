/**
 * Resuming a subscription is exact whatever the gateway still holds: the catch-up comes from the
 * upstream's stored events route, not from its socket replay (which holds back every agent-state change
 * but the last). Real local service (its scripted agent plays a long recorded conversation back while
 * the tests run), real gateway(s), graphql-ws clients; the source of truth is the events route itself.
 *
 * Each test ends with a count of the stored events a client never received (lost), received twice
 * (duplicated) and received out of id order, and expects all three to be 0.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { ExecutionResult } from 'graphql';
import { createClient } from 'graphql-ws';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import type { Collector } from '../helpers/collector.ts';
import { conversationEventsSubscription } from '../helpers/fixtures.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import {
  localServiceForTest,
  rest,
  type StoredEvent,
  storedEvents,
  type TestLocalService,
} from '../helpers/local-service.ts';
import { killAfterTest } from '../helpers/processes.ts';

const EVENTS = conversationEventsSubscription('__typename eventId upstreamKind');

type Result = ExecutionResult<{
  conversationEvents: { __typename: string; eventId: number | null; upstreamKind: string };
}>;
type WireEvent = StoredEvent;

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * A long recorded conversation: agent-state changes every third event (the kind the socket replay
 * holds back), messages, commands and their output, `null` observations (omitted by the gateway's rule)
 * and a `recall` action (delivered as OtherEvent), ending with the message `END`.
 */
function recordedConversation(length: number): Array<Record<string, unknown>> {
  const recorded: Array<Record<string, unknown>> = [];
  const states = ['running', 'awaiting_user_input', 'paused', 'running'];
  for (let i = 0; i < length; i++) {
    if (i % 3 === 1) {
      recorded.push({
        source: 'agent',
        message: '',
        observation: 'agent_state_changed',
        content: '',
        extras: { agent_state: states[i % states.length], reason: '' },
      });
    } else if (i % 17 === 5) {
      recorded.push({ source: 'agent', message: '', observation: 'null', content: '', extras: {} });
    } else if (i === 11) {
      recorded.push({ source: 'agent', message: '', action: 'recall', args: { query: 'x' } });
    } else if (i % 3 === 2) {
      recorded.push({
        source: 'agent',
        message: 'Running command: true',
        action: 'run',
        args: { command: 'true', is_input: false, thought: '' },
      });
    } else {
      const content = `step ${i}`;
      recorded.push({ source: 'agent', message: content, action: 'message', args: { content } });
    }
  }
  recorded.push({ source: 'agent', message: 'END', action: 'message', args: { content: 'END' } });
  return recorded;
}

/** The stored events a subscriber must see: all but `null` actions and observations (docs/live-events.md). */
function deliverable(events: WireEvent[]): number[] {
  return events.filter((event) => event.action !== 'null' && event.observation !== 'null').map((e) => e.id);
}

/** Waits until the agent has played the whole recording back and settled; answers the stored ids. */
async function playedBack(serviceUrl: string, id: string): Promise<WireEvent[]> {
  let events: WireEvent[] = [];
  await vi.waitFor(
    async () => {
      events = await storedEvents(serviceUrl, id);
      const end = events.findIndex((event) => (event.args as { content?: string })?.content === 'END');
      // After END the agent stores its own `awaiting_user_input`.
      if (!(end >= 0 && events.at(-1)?.observation === 'agent_state_changed' && events.length > end + 1))
        throw new Error(`not played back yet: ${events.length} events stored`);
    },
    { timeout: 30_000, interval: 20 },
  );
  return events;
}

/** lost: expected ids never received; duplicated: ids received more than once; outOfOrder: descents. */
function tally(expected: number[], received: number[]) {
  const seen = new Set(received);
  let outOfOrder = 0;
  for (let i = 1; i < received.length; i++)
    if ((received[i] as number) <= (received[i - 1] as number)) outOfOrder++;
  return {
    stored: expected.length,
    lost: expected.filter((id) => !seen.has(id)).length,
    duplicated: received.length - seen.size,
    outOfOrder,
  };
}

function ids(results: Result[]): number[] {
  return results
    .map((result) => result.data?.conversationEvents.eventId)
    .filter((id): id is number => typeof id === 'number');
}

const serviceWithAgent = (replayStepMs: number) => localServiceForTest({ agentTimings: { replayStepMs } });

async function createPlayingConversation(service: TestLocalService, length: number): Promise<string> {
  const created = await rest<{ conversation_id: string }>(service.url, '/api/conversations', {
    method: 'POST',
    body: { replay_json: JSON.stringify(recordedConversation(length)) },
  });
  expect(created.status).toBe(200);
  return created.body.conversation_id;
}

function subscribe(gatewayUrl: string, id: string, after: number) {
  const client = wsClient(gatewayUrl);
  const stream = subscribeOverWs<Result>(client, { query: EVENTS, variables: { id, after } });
  const leaveSubscription = stream.leave;
  return Object.assign(stream, {
    leave: async () => {
      await leaveSubscription();
      await client.dispose();
    },
  });
}

describe('catch-up from the stored events', () => {
  it('a client that leaves, stays away past the idle close, and resumes with its last id ends with exactly the stored list', async () => {
    const service = await serviceWithAgent(15);
    const gateway = await gatewayForTest({ upstreamUrl: service.url, fastLive: true });
    const id = await createPlayingConversation(service, 240);

    const first = subscribe(gateway.url, id, -1) as Collector<Result> & { leave: () => Promise<void> };
    await first.until((items) => ids(items).length >= 40, 15_000);
    await first.leave();
    const last = ids(first.items).at(-1) as number;
    // The gateway closes its upstream socket after the last subscriber left; the agent goes on.
    await vi.waitFor(() => expect(gateway.gateway.liveStats().upstreamSockets).toBe(0), {
      timeout: 5000,
      interval: 20,
    });
    await vi.waitFor(
      async () => expect((await storedEvents(service.url, id)).length).toBeGreaterThan(last + 40),
      { timeout: 15_000, interval: 20 },
    );

    const resumed = subscribe(gateway.url, id, last);
    const stored = await playedBack(service.url, id);
    const expected = deliverable(stored);
    await resumed.until((items) => ids(items).includes(expected.at(-1) as number), 15_000);

    expect(tally(expected, [...ids(first.items), ...ids(resumed.items)])).toEqual({
      stored: expected.length,
      lost: 0,
      duplicated: 0,
      outOfOrder: 0,
    });
    expect([...ids(first.items), ...ids(resumed.items)]).toEqual(expected);
  }, 60_000);

  it('afterEventId -1 on a gateway holding no socket delivers every stored event', async () => {
    const service = await serviceWithAgent(15);
    const id = await createPlayingConversation(service, 240);
    await vi.waitFor(async () => expect((await storedEvents(service.url, id)).length).toBeGreaterThan(60), {
      timeout: 15_000,
      interval: 20,
    });
    const gateway = await gatewayForTest({ upstreamUrl: service.url, fastLive: true });

    const stream = subscribe(gateway.url, id, -1);
    const expected = deliverable(await playedBack(service.url, id));
    await stream.until((items) => ids(items).includes(expected.at(-1) as number), 15_000);

    expect(tally(expected, ids(stream.items))).toEqual({
      stored: expected.length,
      lost: 0,
      duplicated: 0,
      outOfOrder: 0,
    });
    expect(ids(stream.items)).toEqual(expected);
    // The rule's omissions and inclusions: no `null` event, the `recall` action as an OtherEvent.
    const kinds = stream.items.map((item) => item.data?.conversationEvents.upstreamKind);
    expect(kinds).not.toContain('null');
    expect(kinds).toContain('recall');
  }, 60_000);

  it('two gateway processes: the client resumes on the other after its gateway is killed with kill -9, 0 lost, 0 duplicated, in order', async () => {
    const service = await serviceWithAgent(20);
    const [one, two] = await Promise.all([spawnGateway(service.url), spawnGateway(service.url)]);
    const id = await createPlayingConversation(service, 300);

    // docs/live-events.md: graphql-ws retries, and the variables remember the last eventId received, so
    // each resubscription resumes right after it. `url` stands in for a load balancer in front of both.
    let oneAlive = true;
    const variables = { id, after: -1 };
    const client = createClient({
      url: () => (oneAlive ? one.wsUrl : two.wsUrl),
      webSocketImpl: WebSocket,
      retryAttempts: 10,
      retryWait: () => new Promise((done) => setTimeout(done, 400)),
      shouldRetry: () => true,
    });
    onTestFinished(() => client.dispose());
    const received: Result[] = [];
    const unsubscribe = client.subscribe<Result['data']>(
      { query: EVENTS, variables },
      {
        next: (result) => {
          received.push(result as Result);
          const eventId = result.data?.conversationEvents.eventId;
          if (typeof eventId === 'number') variables.after = eventId;
        },
        error: () => {},
        complete: () => {},
      },
    );
    onTestFinished(unsubscribe);

    await vi.waitFor(() => expect(ids(received).length).toBeGreaterThanOrEqual(50), {
      timeout: 20_000,
      interval: 20,
    });
    oneAlive = false;
    one.child.kill('SIGKILL');
    const stored = await playedBack(service.url, id);
    const expected = deliverable(stored);
    await vi.waitFor(() => expect(ids(received)).toContain(expected.at(-1) as number), {
      timeout: 20_000,
      interval: 20,
    });

    expect(received.filter((result) => result.errors)).toEqual([]);
    expect(tally(expected, ids(received))).toEqual({
      stored: expected.length,
      lost: 0,
      duplicated: 0,
      outOfOrder: 0,
    });
    expect(ids(received)).toEqual(expected);
  }, 90_000);
});

/**
 * Spawns `src/index.ts` in front of the given upstream on a free port; answers its URLs. Node itself,
 * not the tsx wrapper, so the kill at the end of the test reaches the gateway (a killed wrapper would
 * leave it running).
 */
async function spawnGateway(upstreamUrl: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent', UPSTREAM_URL: upstreamUrl, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killAfterTest(child);
  let stdout = '';
  child.stdout?.on('data', (chunk) => {
    stdout += String(chunk);
  });
  await vi.waitFor(() => expect(stdout).toMatch(/gateway: http:\/\/\S+\/graphql/), {
    timeout: 30_000,
    interval: 20,
  });
  const url = /gateway: (http:\/\/\S+\/graphql)/.exec(stdout)?.[1] as string;
  return { child, url, wsUrl: url.replace(/^http/, 'ws') };
}
