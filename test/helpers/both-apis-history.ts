/**
 * What the history and lifecycle suites need to run one test body on both OpenHands APIs: a store
 * seeded with N events per conversation in each API's own tables (before the service starts, as a
 * service restarted on an existing data dir finds them), a label per seeded event that both APIs show
 * alike (no `eventId`, which V1 has not), and the upstream's own view of a conversation (its record,
 * its stored events, a stop and a message sent by someone else) in each API's routes.
 *
 *   const seeded = seedHistories(api, dataDir, [KEY_A, KEY_B], KEY_A, { [id]: 1000 });
 *   service = await startTestLocalService({ api, dataDir, sessionApiKeys: [KEY_A, KEY_B] });
 *   await seeded.ready(service.url);
 */
import { expect } from 'vitest';
import { createTenantResolver } from '../../src/local-service/auth.ts';
import { openServiceDatabase } from '../../src/local-service/index.ts';
import { newStoredConversation } from '../../src/local-service/v0/new-conversation.ts';
import { openV0Store } from '../../src/local-service/v0/store.ts';
import { messageEvent, naiveLocalIso, stateUpdate, text } from '../../src/local-service/v1/event-factory.ts';
import { openV1Store } from '../../src/local-service/v1/store.ts';
import type { Api } from './both-apis.ts';
import { seedConversations } from './both-apis.ts';
import { seededEvent } from './fixtures.ts';
import { rest } from './local-service.ts';

/** Seeded conversations, readable once {@link SeededHistories.ready} resolved. */
export interface SeededHistories {
  /** Call once the service listens on the seeded data dir (V1: resumes the seeded sandbox). */
  ready(serviceUrl: string): Promise<void>;
}

/** The first seeded V1 event's time; one second apart, so both V1 event sources order them alike. */
const V1_SEED_EPOCH_MICROS = Date.UTC(2025, 0, 1, 12) * 1000;

/**
 * Seeded event `i` of V1, the same content as V0's {@link seededEvent}: user message `m<i>`, and an
 * idle state update (AWAITING_USER_INPUT) at every fifth. Its timestamp is `i` seconds after a fixed
 * start: the app server's copies order a second's events by kind (docs/upstream-apis.md), the agent
 * server's log by append, and with a second each both sources give the seeded order.
 */
function seededV1Event(i: number) {
  const event = i % 5 === 4 ? stateUpdate('execution_status', 'idle') : messageEvent('user', [text(`m${i}`)]);
  return { ...event, timestamp: naiveLocalIso(V1_SEED_EPOCH_MICROS + i * 1_000_000) };
}

/**
 * Writes conversations of `owner` (one of `keys`, the keys the service will accept) with `counts[id]`
 * seeded events each into the store at `dataDir`, before the service opens it. V1: all of them in one
 * paused sandbox; `ready` resumes it, so history is read from its agent
 * server's log as for any running conversation.
 */
export function seedHistories(
  api: Api,
  dataDir: string,
  keys: string[],
  owner: string,
  counts: Record<string, number>,
): SeededHistories {
  const tenant = createTenantResolver(keys)(owner);
  if (tenant === null) throw new Error('the owner must be one of the keys');
  const database = openServiceDatabase(dataDir);
  try {
    if (api === 'v0') {
      for (const [id, count] of Object.entries(counts)) {
        const store = openV0Store(database);
        store.insertConversation(newStoredConversation(tenant, id));
        for (let i = 0; i < count; i++) store.appendEvent(tenant, id, seededEvent(i));
      }
      return { ready: async () => {} };
    }
    const store = openV1Store(database);
    const sandboxId = 'oh-agent-server-seededHistory';
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    store.insertSandbox({
      id: sandboxId,
      tenant,
      // As a restart leaves every sandbox (v1/store.ts recoverAfterRestart): paused, no port yet.
      status: 'PAUSED',
      sessionApiKey: 'seededHistorySandboxKey',
      port: null,
      specId: 'ghcr.io/openhands/agent-server:5f62cee-python',
      createdAt: now,
    });
    for (const [id, count] of Object.entries(counts)) {
      store.saveConversation({
        id,
        tenant,
        sandboxId,
        title: `Conversation ${id}`,
        selectedRepository: null,
        selectedBranch: null,
        gitProvider: null,
        trigger: 'gui',
        prNumber: [],
        llmModel: null,
        parentConversationId: null,
        agentType: 'default',
        public: null,
        executionStatus: 'idle',
        confirmationPolicy: 'NeverConfirm',
        createdAt: now,
        updatedAt: now,
      });
      for (let i = 0; i < count; i++) store.appendEvent(id, seededV1Event(i));
    }
    return {
      async ready(serviceUrl: string) {
        const resumed = await rest(serviceUrl, `/api/v1/sandboxes/${sandboxId}/resume`, {
          method: 'POST',
          key: owner,
        });
        expect(resumed.status).toBe(200);
      },
    };
  } finally {
    database.close();
  }
}

/** What both APIs show of seeded event `i`: its content (`m<i>`), or its type for the state changes. */
function seededLabel(i: number): string {
  return i % 5 === 4 ? 'AgentStateChangedEvent' : `m${i}`;
}

/** The labels of seeded events `from` (inclusive) to `to` (exclusive). */
export function seededLabels(from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, i) => seededLabel(from + i));
}

/** A history node's label, as {@link seededLabel} names a seeded event. */
export function labelOf(node: { __typename: string; content?: string | null }): string {
  return node.__typename === 'UserMessageEvent' ? (node.content ?? '') : node.__typename;
}

/** The upstream's record of a conversation as its own routes answer it: title and status, or null. */
export async function upstreamConversation(
  api: Api,
  url: string,
  id: string,
  key: string,
): Promise<{ title: string; status: string; sandboxId: string | null } | null> {
  if (api === 'v0') {
    const read = await rest<{ title: string; status: string } | null>(url, `/api/conversations/${id}`, {
      key,
    });
    return read.body && { title: read.body.title, status: read.body.status, sandboxId: null };
  }
  const read = await rest<Array<{ title: string; sandbox_status: string; sandbox_id: string } | null>>(
    url,
    `/api/v1/app-conversations?ids=${id}`,
    { key },
  );
  expect(read.status).toBe(200);
  const record = read.body[0] ?? null;
  // V1's status is its sandbox's (docs/upstream-apis.md: PAUSED is the graph's STOPPED).
  return record && { title: record.title, status: record.sandbox_status, sandboxId: record.sandbox_id };
}

/** The upstream status of a stopped conversation: V0's STOPPED, V1's paused sandbox. */
export function stoppedStatus(api: Api): string {
  return api === 'v0' ? 'STOPPED' : 'PAUSED';
}

/** A new conversation of `key`, straight on the service (V1: READY, in a sandbox of its own). */
export async function createUpstreamConversation(api: Api, url: string, key: string): Promise<string> {
  const [id] = await seedConversations(api, url, 1, key);
  return id as string;
}

/** Stops the conversation straight on the service, as someone else would (V1: pauses its sandbox). */
export async function stopUpstream(api: Api, url: string, id: string, key: string): Promise<void> {
  if (api === 'v0') {
    expect((await rest(url, `/api/conversations/${id}/stop`, { method: 'POST', key })).status).toBe(200);
    return;
  }
  const sandboxId = (await upstreamConversation(api, url, id, key))?.sandboxId;
  const paused = await rest(url, `/api/v1/sandboxes/${sandboxId}/pause`, { method: 'POST', key });
  expect(paused.status).toBe(200);
}

/** Deletes the conversation straight on the service, as someone else would. */
export async function deleteUpstream(api: Api, url: string, id: string, key: string): Promise<void> {
  const path = api === 'v0' ? `/api/conversations/${id}` : `/api/v1/app-conversations/${id}`;
  expect((await rest(url, path, { method: 'DELETE', key })).status).toBe(200);
}

/** Sends a user message straight to the service, the agent answering it (V0: the events route). */
export async function postUpstreamMessage(
  api: Api,
  url: string,
  id: string,
  content: string,
  key: string,
): Promise<void> {
  const sent =
    api === 'v0'
      ? await rest(url, `/api/conversations/${id}/events`, {
          method: 'POST',
          body: { action: 'message', args: { content, image_urls: [], file_urls: [] } },
          key,
        })
      : await rest(url, `/api/v1/app-conversations/${id}/send-message`, {
          method: 'POST',
          body: { role: 'user', content: [{ type: 'text', text: content }], run: true },
          key,
        });
  expect(sent.status).toBe(200);
}

/**
 * How many events the upstream stores for the conversation (V0: its events route; V1: the app
 * server's copies, which the local service keeps without lag), or null when the route answers 404.
 */
export async function upstreamEventCount(
  api: Api,
  url: string,
  id: string,
  key: string,
): Promise<number | null> {
  const path =
    api === 'v0' ? `/api/conversations/${id}/events?limit=100` : `/api/v1/conversation/${id}/events/count`;
  if (api === 'v0') {
    let count = 0;
    for (let start = 0; ; ) {
      const read = await rest<{ events: Array<{ id: number }>; has_more: boolean }>(
        url,
        `${path}&start_id=${start}`,
        { key },
      );
      if (read.status === 404) return null;
      expect(read.status).toBe(200);
      count += read.body.events.length;
      if (!read.body.has_more || read.body.events.length === 0) return count;
      start = (read.body.events.at(-1)?.id ?? 0) + 1;
    }
  }
  const read = await rest<number>(url, path, { key });
  if (read.status === 404) return null;
  expect(read.status).toBe(200);
  return read.body;
}

/** Every stored event's cursor, oldest first, read through the graph's history connection. */
export async function historyCursors(gatewayUrl: string, id: string, key: string): Promise<string[]> {
  const cursors: string[] = [];
  for (let after: string | null = null; ; ) {
    const response = await fetch(gatewayUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': key },
      body: JSON.stringify({
        query: `query($id: ID!, $after: String) { conversation(id: $id) {
          events(first: 100, after: $after) { edges { cursor } pageInfo { hasNextPage endCursor } } } }`,
        variables: { id, after },
      }),
    });
    const answer = (await response.json()) as {
      data?: {
        conversation: {
          events: { edges: Array<{ cursor: string }>; pageInfo: { hasNextPage: boolean; endCursor: string } };
        } | null;
      };
      errors?: unknown;
    };
    expect(answer.errors).toBeUndefined();
    const events = answer.data?.conversation?.events;
    if (!events) throw new Error(`no conversation ${id}`);
    cursors.push(...events.edges.map((edge) => edge.cursor));
    if (!events.pageInfo.hasNextPage) return cursors;
    after = events.pageInfo.endCursor;
  }
}

/**
 * The cursors of the stored events a stream delivered, in its order, without the live-only events
 * that have no id of their own (each carries the cursor of the stored event before it,
 * docs/live-events.md): V0 marks them with a null `eventId`; every event a V1 agent server sends
 * carries its own id, so none is left out there.
 */
export function storedEventCursors(
  api: Api,
  events: ReadonlyArray<{ cursor: string; eventId: number | null } | null | undefined>,
): string[] {
  return events
    .filter((event): event is { cursor: string; eventId: number | null } => event != null)
    .filter((event) => api === 'v1' || event.eventId !== null)
    .map((event) => event.cursor);
}
