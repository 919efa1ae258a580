/**
 * The local service's socket half on its own, and recording Socket.IO clients of it. Only the
 * local-service tests use it (they reach into the store and runtime directly), so it lives with them;
 * every other suite talks to the whole service through test/helpers/local-service.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { type Socket as ClientSocket, io as connectClient } from 'socket.io-client';
import { onTestFinished } from 'vitest';
import { createTenantResolver } from '../../src/local-service/auth.ts';
import { openServiceDatabase } from '../../src/local-service/index.ts';
import { createAgentRuntime } from '../../src/local-service/v0/agent.ts';
import type { AgentRuntime, ConversationStore } from '../../src/local-service/v0/seams.ts';
import { attachConversationSocket } from '../../src/local-service/v0/socket.ts';
import { openV0Store } from '../../src/local-service/v0/store.ts';
import { openWorkspaces } from '../../src/local-service/workspace/workspaces.ts';
import { listenOnLoopback, stopServer } from '../helpers/loopback.ts';

/**
 * The socket half of the local service on its own: a real node:http server on port 0 with the real
 * store (temp dir), runtime and Socket.IO attachment. Used where a test needs to reach into the store
 * or runtime directly (seeding events, nested keys); REST-level checks use startTestLocalService().
 */
export interface SocketHarness {
  url: string;
  dir: string;
  store: ConversationStore;
  runtime: AgentRuntime;
  close(): Promise<void>;
}

const FAST_TIMINGS = { startupMs: 5, replyMs: 10, replayStepMs: 2 };

export async function startSocketHarness(
  options: { keys?: string[]; nestedRuntime?: boolean; dir?: string; logger?: pino.Logger } = {},
): Promise<SocketHarness> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'socket-test-'));
  const database = openServiceDatabase(dir);
  const store = openV0Store(database);
  const logger = options.logger ?? pino({ level: 'silent' });
  const runtime = createAgentRuntime({
    store,
    workspaces: openWorkspaces(join(dir, 'workspaces'), null, logger),
    timings: FAST_TIMINGS,
    nestedRuntime: options.nestedRuntime ?? false,
    logger,
  });
  const server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  const socket = attachConversationSocket(server, {
    store,
    runtime,
    resolveTenant: createTenantResolver(options.keys ?? []),
    logger,
  });
  const url = await listenOnLoopback(server);
  let closed = false;
  return {
    url,
    dir,
    store,
    runtime,
    async close() {
      if (closed) return;
      closed = true;
      await socket.close();
      await runtime.close();
      await stopServer(server);
      database.close();
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** {@link startSocketHarness}, closed when the current test finishes. */
export async function socketHarnessForTest(options: Parameters<typeof startSocketHarness>[0] = {}) {
  const harness = await startSocketHarness(options);
  onTestFinished(() => harness.close());
  return harness;
}

/** One entry of what a client saw, in arrival order. */
type Seen = { kind: 'connect' } | { kind: 'event'; event: Record<string, unknown> };

/** A socket.io-client connection that records everything it sees. Close it with `close()`. */
export interface RecordingClient {
  socket: ClientSocket;
  seen: Seen[];
  events(): Array<Record<string, unknown>>;
  /** Resolves when `test(events)` holds; rejects after `timeoutMs` with what was seen. */
  until(test: (events: Array<Record<string, unknown>>) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves on connect, rejects with the connect_error. */
  connected: Promise<void>;
  close(): void;
}

function openClient(
  url: string,
  query: Record<string, string>,
  transports: Array<'websocket' | 'polling'> = ['websocket'],
): RecordingClient {
  const socket = connectClient(url, {
    path: '/socket.io/',
    transports,
    query,
    reconnection: false,
    forceNew: true,
  });
  const seen: Seen[] = [];
  const waiters = new Set<() => void>();
  const events = () => seen.flatMap((s) => (s.kind === 'event' ? [s.event] : []));
  socket.on('oh_event', (event: Record<string, unknown>) => {
    seen.push({ kind: 'event', event });
    for (const check of [...waiters]) check();
  });
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      seen.push({ kind: 'connect' });
      resolve();
    });
    socket.once('connect_error', reject);
  });
  // Tests that expect a refusal assert on `connected`; avoid an unhandled rejection in the others.
  connected.catch(() => {});
  return {
    socket,
    seen,
    events,
    connected,
    until(test, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!test(events())) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out; saw ${JSON.stringify(events())}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close() {
      socket.close();
    },
  };
}

/** The agent state of the last agent_state_changed observation among `events`. */
export function lastAgentState(events: Array<Record<string, unknown>>): unknown {
  const states = events.filter((e) => e.observation === 'agent_state_changed');
  return (states.at(-1)?.extras as { agent_state?: unknown } | undefined)?.agent_state;
}

/** {@link openClient}, closed when the current test finishes. */
export function socketClientForTest(
  url: string,
  query: Record<string, string>,
  transports?: Array<'websocket' | 'polling'>,
): RecordingClient {
  const client = openClient(url, query, transports);
  onTestFinished(() => client.close());
  return client;
}

/** A socket on conversation `id` replaying from the start, closed when the current test finishes. */
export function conversationSocketForTest(url: string, id: string, key = ''): RecordingClient {
  return socketClientForTest(url, { conversation_id: id, latest_event_id: '-1', session_api_key: key });
}
