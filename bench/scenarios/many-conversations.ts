/**
 * Many watched conversations (the realistic scale: many conversations, few viewers each): C
 * conversations with S graphql-ws subscribers each (one WebSocket per subscriber, in the fan-out's two
 * subscriber processes), so the server holds C upstream Socket.IO connections; the agent then answers
 * one `think:` message in every conversation (sent over REST, in waves). Measured for the gateway and
 * for its floor (bench/floors/fanout-floor.ts: a bare Socket.IO client per conversation plus the bare
 * graphql-ws fan-out), one after the other (gateway first), each fresh in front of the same service:
 * - time to open all subscriptions: until every subscriber is acknowledged and the service counts one
 *   socket per conversation;
 * - RSS per watched conversation: (RSS with all subscriptions - RSS after one query) / C;
 * - CPU per delivery (/proc, first message until the last delivery) and delivery p50/p99 (upstream
 *   event timestamp to receipt);
 * - deliveries vs the events the service stored meanwhile times S.
 * The scenario has its own local service (temp data dir) whose agent-loop limit is raised above C, so
 * no conversation's answer is cut by another one starting (the default keeps 50 loops).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { BenchContext } from '../lib/context.ts';
import { cpuMs, rssBytes, spawnLocalService } from '../lib/processes.ts';
import { fmt, type Row, ratio, type ScenarioResult } from '../lib/report.ts';
import { percentile, round, sorted } from '../lib/stats.ts';
import { serviceGit, waitForRepository } from '../lib/workspace-repository.ts';
import {
  CLIENT_PROCESSES,
  collectWhenSettled,
  createConversation,
  type FanoutServer,
  SubscriberProcess,
  sleep,
  spawnFanoutServer,
} from './fanout.ts';

/** Sizes: conversations and subscribers per conversation. */
export interface ManyConversationsSize {
  conversations: number;
  subscribersPerConversation: number;
}

/** Messages sent per wave and the pause between waves (about 80 messages a second). */
const WAVE = 40;
const WAVE_PAUSE_MS = 500;

interface ManyFigures {
  server: FanoutServer;
  conversations: number;
  subscribers: number;
  opened: number;
  openFailed: number;
  /** All subscribers acknowledged. */
  ackedSeconds: number;
  /** Acknowledged and one upstream socket per conversation counted by the service. */
  openSeconds: number;
  upstreamSockets: number;
  rssBaselineMiB: number;
  rssWithSubscriptionsMiB: number;
  rssPerConversationKiB: number;
  messages: number;
  /** Stored events the service added during the measurement, times subscribers per conversation. */
  expectedDeliveries: number;
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerDelivery: number;
  errors: string[];
}

interface Service {
  url: string;
  key: string;
  pool: Pool;
}

async function json<T>(service: Service, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await service.pool.request({
    path,
    method,
    headers: {
      'x-session-api-key': service.key,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200)
    throw new Error(`${method} ${path} answered ${response.statusCode}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** Runs `task` over `items` with `width` in flight. */
async function inParallel<T, R>(
  items: readonly T[],
  width: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index] as T);
      }
    }),
  );
  return results;
}

/** Sockets the service counts over all of the tenant's conversations. */
async function upstreamSockets(service: Service): Promise<number> {
  let total = 0;
  let pageId: string | null = null;
  do {
    const query: string = pageId ? `&page_id=${encodeURIComponent(pageId)}` : '';
    const page: { results: Array<{ num_connections?: number }>; next_page_id: string | null } = await json(
      service,
      'GET',
      `/api/conversations?limit=100${query}`,
    );
    for (const record of page.results) total += record.num_connections ?? 0;
    pageId = page.next_page_id;
  } while (pageId);
  return total;
}

/** Id of the newest stored event of each conversation (-1 when none). */
function latestEventIds(service: Service, ids: readonly string[]): Promise<number[]> {
  return inParallel(ids, 16, async (id) => {
    const page = await json<{ events: Array<{ id?: number }> }>(
      service,
      'GET',
      `/api/conversations/${id}/events?reverse=true&limit=1`,
    );
    return page.events[0]?.id ?? -1;
  });
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  for (const end = performance.now() + timeoutMs; performance.now() < end; ) {
    if (await check()) return true;
    await sleep(500);
  }
  return false;
}

async function runSide(
  context: BenchContext,
  service: Service,
  ids: readonly string[],
  size: ManyConversationsSize,
  server: FanoutServer,
): Promise<ManyFigures> {
  // The previous side's sockets must be gone, or the socket count below would include them.
  await until(async () => (await upstreamSockets(service)) === 0, 30_000);
  const served = await spawnFanoutServer(server, service.url, context.gatewayNodeFlags);
  const clients: SubscriberProcess[] = [];
  try {
    await fetch(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': service.key },
      body: JSON.stringify({ query: '{ conversations(first: 1) { edges { node { id } } } }' }),
    });
    await sleep(500);
    const rssBaseline = rssBytes(served.pid);

    const subscribers = size.conversations * size.subscribersPerConversation;
    const perProcess = Math.ceil(subscribers / CLIENT_PROCESSES);
    const openStarted = performance.now();
    for (let i = 0; i < CLIENT_PROCESSES; i++) clients.push(new SubscriberProcess());
    const replies = await Promise.all(
      clients.map((client, i) => {
        const count = Math.min(perProcess, subscribers - i * perProcess);
        // Process i starts its share where the previous one stopped, so the S subscribers of a
        // conversation spread over the processes.
        const offset = (i * perProcess) % ids.length;
        return client.request(
          {
            type: 'open',
            url: served.url,
            key: service.key,
            conversationId: ids[0] as string,
            conversationIds: [...ids.slice(offset), ...ids.slice(0, offset)],
            count,
          },
          'opened',
        );
      }),
    );
    const ackedSeconds = (performance.now() - openStarted) / 1000;
    let opened = 0;
    let openFailed = 0;
    for (const reply of replies) {
      opened += reply.count - reply.failed;
      openFailed += reply.failed;
    }
    await until(async () => (await upstreamSockets(service)) >= ids.length, 180_000);
    const openSeconds = (performance.now() - openStarted) / 1000;
    await sleep(1000);
    const rssWith = rssBytes(served.pid);
    const sockets = await upstreamSockets(service);

    const before = await latestEventIds(service, ids);
    for (const client of clients) client.child.send({ type: 'reset' });
    const cpuBefore = cpuMs(served.pid);
    for (let i = 0; i < ids.length; i += WAVE) {
      await inParallel(ids.slice(i, i + WAVE), 16, (id) =>
        json(service, 'POST', `/api/conversations/${id}/events`, {
          action: 'message',
          args: { content: `think: wave ${i / WAVE}`, image_urls: [], file_urls: [] },
        }),
      );
      await sleep(WAVE_PAUSE_MS);
    }
    // The agent answers over about a second; then wait for the count to settle.
    await sleep(2000);
    const after = await latestEventIds(service, ids);
    const stored = after.reduce((sum, id, i) => sum + (id - (before[i] ?? -1)), 0);
    const expected = stored * size.subscribersPerConversation;
    const result = await collectWhenSettled(clients, expected);
    const cpuSpent = cpuMs(served.pid) - cpuBefore;
    const s = sorted(result.latencies);
    return {
      server,
      conversations: ids.length,
      subscribers,
      opened,
      openFailed,
      ackedSeconds: round(ackedSeconds),
      openSeconds: round(openSeconds),
      upstreamSockets: sockets,
      rssBaselineMiB: round(rssBaseline / 2 ** 20),
      rssWithSubscriptionsMiB: round(rssWith / 2 ** 20),
      rssPerConversationKiB: round((rssWith - rssBaseline) / ids.length / 1024),
      messages: ids.length,
      expectedDeliveries: expected,
      deliveries: result.received,
      p50Ms: round(percentile(s, 50)),
      p99Ms: round(percentile(s, 99)),
      cpuUsPerDelivery: round((cpuSpent * 1000) / Math.max(1, result.received)),
      errors: [...new Set(result.errors)].slice(0, 5),
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await served.stop();
  }
}

/** Runs the scenario at `size`: gateway and floor in front of one fresh local service. */
export async function runManyConversations(
  context: BenchContext,
  size: ManyConversationsSize,
): Promise<ScenarioResult> {
  const dataDir = mkdtempSync(join(os.tmpdir(), 'gateway-bench-many-'));
  const localService = await spawnLocalService(dataDir, context.key, [
    '--max-running-agents',
    String(size.conversations + 100),
  ]);
  const service: Service = {
    url: localService.url,
    key: context.key,
    pool: new Pool(localService.url, { connections: 16 }),
  };
  try {
    const ids: string[] = [];
    for (let i = 0; i < size.conversations; i += 20) {
      const batch = Array.from({ length: Math.min(20, size.conversations - i) }, () =>
        createConversation({ serviceUrl: service.url, key: service.key }),
      );
      ids.push(...(await Promise.all(batch)));
    }
    // Every new conversation gets a git repository, made by one queue of the service in arrival order:
    // waiting for those of the last batch waits out minutes of git work that would otherwise run beside
    // the measurement (at 2,000 it kept the service from accepting the gateway's sockets in time: SYN
    // cookies, then 10 s connect timeouts that ended the whole run).
    const git = await serviceGit(dataDir);
    for (const id of ids.slice(-20)) await waitForRepository(git, join(dataDir, 'workspaces', 'v0', id));
    // Let the agents of the new conversations finish starting before anything is measured.
    await sleep(2000);
    const figures: Partial<Record<FanoutServer, ManyFigures>> = {};
    for (const server of ['gateway', 'floor'] as const) {
      figures[server] = await runSide(context, service, ids, size, server);
    }
    const { gateway: g, floor: f } = figures as Record<FanoutServer, ManyFigures>;
    const name = `many ${size.conversations}x${size.subscribersPerConversation}`;
    const rows: Row[] = [
      {
        scenario: name,
        measure: 'time to open all subscriptions',
        gateway: fmt(g.openSeconds, 's'),
        direct: '',
        floor: fmt(f.openSeconds, 's'),
        vsFloor: ratio(g.openSeconds, f.openSeconds),
        derived: `acked after ${fmt(g.ackedSeconds)} s (floor ${fmt(f.ackedSeconds)} s); ${g.opened}/${g.subscribers} subscribed, upstream sockets ${g.upstreamSockets} (floor ${f.upstreamSockets})`,
      },
      {
        scenario: name,
        measure: 'RSS per watched conversation',
        gateway: fmt(g.rssPerConversationKiB, 'KiB'),
        direct: '',
        floor: fmt(f.rssPerConversationKiB, 'KiB'),
        vsFloor: ratio(g.rssPerConversationKiB, f.rssPerConversationKiB),
        derived: `${fmt(g.rssBaselineMiB)} -> ${fmt(g.rssWithSubscriptionsMiB)} MiB (floor ${fmt(f.rssBaselineMiB)} -> ${fmt(f.rssWithSubscriptionsMiB)})`,
      },
      {
        scenario: name,
        measure: 'CPU per delivery',
        gateway: fmt(g.cpuUsPerDelivery, 'µs'),
        direct: '',
        floor: fmt(f.cpuUsPerDelivery, 'µs'),
        vsFloor: ratio(g.cpuUsPerDelivery, f.cpuUsPerDelivery),
        derived: 'from /proc, first message to last delivery',
      },
      {
        scenario: name,
        measure: 'delivery p50/p99',
        gateway: `${fmt(g.p50Ms)}/${fmt(g.p99Ms)} ms`,
        direct: '',
        floor: `${fmt(f.p50Ms)}/${fmt(f.p99Ms)} ms`,
        vsFloor: `p99 ${ratio(g.p99Ms, f.p99Ms)}`,
        derived: `${g.deliveries}/${g.expectedDeliveries} delivered (floor ${f.deliveries}/${f.expectedDeliveries})${
          [...g.errors, ...f.errors.map((e) => `floor: ${e}`)].length
            ? `; errors: ${[...g.errors, ...f.errors.map((e) => `floor: ${e}`)].join('; ')}`
            : ''
        }`,
      },
    ];
    return {
      name: 'many-conversations',
      rows,
      details: {
        size,
        gateway: g,
        floor: f,
        vsFloor: {
          openSeconds: round(g.openSeconds / f.openSeconds),
          rssPerConversation: round(g.rssPerConversationKiB / f.rssPerConversationKiB),
          cpuPerDelivery: round(g.cpuUsPerDelivery / f.cpuUsPerDelivery),
          p99: round(g.p99Ms / f.p99Ms),
        },
      },
    };
  } finally {
    await service.pool.close();
    await localService.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
