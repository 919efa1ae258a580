/**
 * A subscriber process of the fan-out scenario (forked by bench/scenarios/fanout.ts, talks over IPC).
 * Holds `count` graphql-ws connections, one subscription each, to `conversationEvents`, and records for
 * every delivered event the delay from its upstream timestamp (the moment the local service stored and
 * emitted it) to its receipt here. Not a test and not imported by anything else.
 */
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

/** Parent -> child. */
export type FanoutCommand =
  | {
      type: 'open';
      url: string;
      key: string;
      conversationId: string;
      count: number;
      /** Many watched conversations: subscriber i watches `conversationIds[i % length]` instead. */
      conversationIds?: string[];
    }
  | { type: 'reset' }
  | { type: 'report' }
  | { type: 'close' };

/** Child -> parent. */
export type FanoutReply =
  | { type: 'opened'; count: number; failed: number; ms: number }
  | {
      type: 'report';
      /** Subscribers that received at least one event since the last reset. */
      reached: number;
      /** Per-event delivery delays in ms since the last reset. */
      latenciesMs: number[];
      /** Events received since the last reset, all subscribers together. */
      received: number;
      errors: string[];
    }
  | { type: 'closed' };

const SUBSCRIPTION = `subscription BenchFanout($id: ID!) {
  conversationEvents(conversationId: $id) { eventId timestamp }
}`;

/** Reads the upstream timestamp (UTC after the gateway's mapping, µs digits) as epoch ms. */
function epochMs(timestamp: string): number {
  return Date.parse(timestamp);
}

/** A subscription error as text: GraphQL errors as JSON, a closed socket as its close code. */
function describe(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && 'reason' in error) {
    return `socket closed ${String(error.code)} ${String(error.reason)}`.trim();
  }
  return JSON.stringify(error).slice(0, 300);
}

const clients: Client[] = [];
const disposers: Array<() => void> = [];
let latencies: number[] = [];
let received = 0;
let reachedSet = new Set<number>();
/** Subscription errors since the last reset (first 10). */
const errors: string[] = [];

function reply(message: FanoutReply): void {
  process.send?.(message);
}

async function open(command: Extract<FanoutCommand, { type: 'open' }>): Promise<void> {
  const started = performance.now();
  let failed = 0;
  // In batches, so the gateway's accept backlog is never the thing being measured.
  const batch = 250;
  for (let i = 0; i < command.count; i += batch) {
    const opening: Promise<void>[] = [];
    for (let j = i; j < Math.min(command.count, i + batch); j++) {
      const index = j;
      opening.push(
        new Promise<void>((resolve) => {
          const client = createClient({
            url: command.url.replace(/^http/, 'ws'),
            webSocketImpl: WebSocket,
            connectionParams: { 'X-Session-API-Key': command.key },
            lazy: false,
            retryAttempts: 0,
            // The default prints every close event to the console; failures are counted instead.
            onNonLazyError: () => {},
            on: {
              connected: () => resolve(),
              error: () => {
                failed++;
                resolve();
              },
            },
          });
          clients.push(client);
          disposers.push(
            client.subscribe<{ conversationEvents: { eventId: number | null; timestamp: string | null } }>(
              {
                query: SUBSCRIPTION,
                variables: {
                  id: command.conversationIds
                    ? command.conversationIds[index % command.conversationIds.length]
                    : command.conversationId,
                },
              },
              {
                next: (result) => {
                  const receivedAt = performance.timeOrigin + performance.now();
                  const event = result.data?.conversationEvents;
                  received++;
                  reachedSet.add(index);
                  if (event?.timestamp) latencies.push(receivedAt - epochMs(event.timestamp));
                },
                error: (error) => {
                  if (errors.length < 10) errors.push(describe(error));
                },
                complete: () => {},
              },
            ),
          );
        }),
      );
    }
    await Promise.all(opening);
  }
  reply({ type: 'opened', count: command.count, failed, ms: performance.now() - started });
}

process.on('message', (message: FanoutCommand) => {
  switch (message.type) {
    case 'open':
      void open(message);
      break;
    case 'reset':
      errors.length = 0;
      latencies = [];
      received = 0;
      reachedSet = new Set();
      break;
    case 'report':
      reply({ type: 'report', reached: reachedSet.size, latenciesMs: latencies, received, errors });
      break;
    case 'close':
      for (const dispose of disposers) dispose();
      void Promise.all(clients.map((c) => c.dispose())).then(() => {
        reply({ type: 'closed' });
        process.disconnect?.();
      });
      break;
  }
});
