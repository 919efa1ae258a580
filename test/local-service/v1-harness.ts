/**
 * What the V1 tests of the local service share: starting conversations through the app server (and
 * waiting for their start task), calling a conversation's agent server with its sandbox key, and a
 * recording WebSocket client of the event socket. Every socket opened here is closed when the test
 * finishes.
 */
import { expect, onTestFinished, vi } from 'vitest';
import WebSocket from 'ws';
import type {
  AppConversationRecord,
  AppConversationStartTaskRecord,
} from '../../src/contract/v1/app-server.ts';
import type { SdkEventRecord } from '../../src/contract/v1/events.ts';
import { type RestOptions, type RestResult, rest } from '../helpers/local-service.ts';

/** Starts a conversation and waits for its task to end; expects READY unless told otherwise. */
export async function startConversation(
  url: string,
  body: Record<string, unknown> = {},
  options: { key?: string; expect?: 'READY' | 'ERROR' } = {},
): Promise<{ task: AppConversationStartTaskRecord; conversation: AppConversationRecord }> {
  const started = await rest<AppConversationStartTaskRecord>(url, '/api/v1/app-conversations', {
    method: 'POST',
    body,
    key: options.key,
  });
  expect(started.status).toBe(200);
  const task = await finalTask(url, started.body.id, options.key);
  expect(task.status, task.detail ?? '').toBe(options.expect ?? 'READY');
  if (task.status !== 'READY') return { task, conversation: undefined as unknown as AppConversationRecord };
  const got = await rest<Array<AppConversationRecord | null>>(
    url,
    `/api/v1/app-conversations?ids=${task.app_conversation_id}`,
    { key: options.key },
  );
  return { task, conversation: got.body[0] as AppConversationRecord };
}

/** Polls a start task until READY or ERROR. */
async function finalTask(url: string, taskId: string, key?: string): Promise<AppConversationStartTaskRecord> {
  return vi.waitFor(
    async () => {
      const got = await rest<Array<AppConversationStartTaskRecord | null>>(
        url,
        `/api/v1/app-conversations/start-tasks?ids=${taskId}`,
        { key },
      );
      const task = got.body[0];
      if (!task || (task.status !== 'READY' && task.status !== 'ERROR'))
        throw new Error('start still running');
      return task;
    },
    { timeout: 15_000, interval: 25 },
  );
}

/** A REST call to the conversation's agent server (`path` under its `/api/conversations/{id}`). */
export function agentRest<T = unknown>(
  conversation: AppConversationRecord,
  path: string,
  options: RestOptions = {},
): Promise<RestResult<T>> {
  const url = new URL(conversation.conversation_url as string);
  return rest<T>(url.origin, `${url.pathname}${path}`, {
    key: conversation.session_api_key ?? '',
    ...options,
  });
}

/** Every stored event of a conversation through the agent server's search, oldest first. */
export async function agentEvents(
  conversation: AppConversationRecord,
  query = '',
): Promise<SdkEventRecord[]> {
  const events: SdkEventRecord[] = [];
  let pageId: string | null = null;
  do {
    const cursor: string = pageId === null ? '' : `&page_id=${pageId}`;
    const page: RestResult<{ items: SdkEventRecord[]; next_page_id: string | null }> = await agentRest(
      conversation,
      `/events/search?limit=100${cursor}${query}`,
    );
    expect(page.status).toBe(200);
    events.push(...page.body.items);
    pageId = page.body.next_page_id;
  } while (pageId !== null);
  return events;
}

/** Waits until the conversation's execution status (on its agent server) is `status`. */
export async function waitForStatus(conversation: AppConversationRecord, status: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const info = await agentRest<{ execution_status: string }>(conversation, '');
      if (info.body.execution_status !== status) throw new Error(`status ${info.body.execution_status}`);
    },
    { timeout: 15_000, interval: 10 },
  );
}

/** A user message body. */
export function userMessage(text: string, run?: boolean): Record<string, unknown> {
  return { role: 'user', content: [{ type: 'text', text }], ...(run === undefined ? {} : { run }) };
}

/** A recording client of the event socket. */
export interface EventSocketClient {
  ws: WebSocket;
  frames: SdkEventRecord[];
  /** Resolves with the close code and reason (or the handshake's HTTP status as `refused`). */
  closed: Promise<{ code: number; reason: string; refused?: number }>;
  opened: Promise<boolean>;
  waitFor(predicate: (frames: SdkEventRecord[]) => boolean): Promise<void>;
}

/** The socket URL of a conversation (`ws://host:port/sockets/events/<id>`) with `query`. */
export function socketUrl(conversation: AppConversationRecord, query: Record<string, string> = {}): string {
  const url = new URL(conversation.conversation_url as string);
  const id = url.pathname.split('/').at(-1) as string;
  const search = new URLSearchParams(query).toString();
  return `ws://${url.host}/sockets/events/${id}${search ? `?${search}` : ''}`;
}

/** Opens the event socket (closed when the test finishes). */
export function openEventSocket(url: string, headers: Record<string, string> = {}): EventSocketClient {
  const ws = new WebSocket(url, { headers });
  const frames: SdkEventRecord[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as SdkEventRecord));
  const closed = new Promise<{ code: number; reason: string; refused?: number }>((resolve) => {
    ws.on('unexpected-response', (_request, response) => {
      resolve({ code: 0, reason: '', refused: response.statusCode ?? 0 });
      ws.terminate();
    });
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) }));
  });
  ws.on('error', () => undefined);
  const opened = new Promise<boolean>((resolve) => {
    ws.once('open', () => resolve(true));
    closed.then(() => resolve(false));
  });
  onTestFinished(async () => {
    if (ws.readyState !== WebSocket.CLOSED) {
      ws.terminate();
      await closed;
    }
  });
  return {
    ws,
    frames,
    closed,
    opened,
    waitFor: (predicate) =>
      vi.waitFor(
        () => {
          if (!predicate(frames)) throw new Error(`not yet (${frames.length} frames)`);
        },
        { timeout: 15_000, interval: 5 },
      ),
  };
}

/** Whether an execution-status update to `status` is among the frames. */
export const hasStatus = (status: string) => (frames: SdkEventRecord[]) =>
  frames.some(
    (f) => f.kind === 'ConversationStateUpdateEvent' && f.key === 'execution_status' && f.value === status,
  );
