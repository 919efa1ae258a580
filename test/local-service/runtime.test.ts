import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openServiceDatabase } from '../../src/local-service/index.ts';
import { createAgentRuntime, localEventTimestamp } from '../../src/local-service/v0/agent.ts';
import { newStoredConversation } from '../../src/local-service/v0/new-conversation.ts';
import type { AgentRuntime, LiveEvent, StoredConversation } from '../../src/local-service/v0/seams.ts';
import { openV0Store } from '../../src/local-service/v0/store.ts';
import { openWorkspaces } from '../../src/local-service/workspace/workspaces.ts';

// Unit level: the runtime against a real SQLite store on a temp dir (no sockets). The socket tests
// cover the same behaviour end to end.

const TIMINGS = { startupMs: 5, replyMs: 5, replayStepMs: 1 };
const silent = pino({ level: 'silent' });

function setup(options: { nestedRuntime?: boolean; maxRunningAgents?: number; dir?: string } = {}) {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'runtime-test-'));
  if (!options.dir) onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const database = openServiceDatabase(dir);
  const store = openV0Store(database);
  const runtime = createAgentRuntime({
    store,
    workspaces: openWorkspaces(join(dir, 'workspaces'), null, silent),
    timings: TIMINGS,
    nestedRuntime: options.nestedRuntime ?? false,
    logger: silent,
    ...(options.maxRunningAgents === undefined ? {} : { maxRunningAgents: options.maxRunningAgents }),
  });
  // Runtime first: its close() writes the STOPPED status through the still-open store.
  onTestFinished(() => database.close());
  onTestFinished(() => runtime.close());
  return { dir, database, store, runtime };
}

function conversation(tenant: string, n: number, overrides: Partial<StoredConversation> = {}) {
  const id = n.toString(16).padStart(32, 'a');
  return newStoredConversation(tenant, id, { createdAt: '2026-01-01T00:00:00.000Z', ...overrides });
}

/** Collects live events until `done(events)` says so. */
function collect(runtime: AgentRuntime, tenant: string, id: string) {
  const events: LiveEvent[] = [];
  let waiter: { test: (e: LiveEvent[]) => boolean; resolve: () => void } | null = null;
  const off = runtime.onEvent(tenant, id, (event) => {
    events.push(event);
    if (waiter?.test(events)) waiter.resolve();
  });
  onTestFinished(off);
  return {
    events,
    until(test: (e: LiveEvent[]) => boolean): Promise<LiveEvent[]> {
      if (test(events)) return Promise.resolve(events);
      return new Promise((resolve) => {
        waiter = { test, resolve: () => resolve(events) };
      });
    },
  };
}

const agentStates = (events: LiveEvent[]) =>
  events.flatMap((e) =>
    'observation' in e && e.observation === 'agent_state_changed' ? [String(e.extras.agent_state)] : [],
  );
const lastState = (events: LiveEvent[]) => agentStates(events).at(-1);

describe('agent runtime', () => {
  it('starts: STARTING -> RUNNING/READY, loading -> awaiting_user_input, initial message answered', async () => {
    const { store, runtime } = setup();
    const c = conversation('t1', 1);
    store.insertConversation(c);
    const live = collect(runtime, 't1', c.conversationId);

    expect(runtime.start('t1', c.conversationId, { initialUserMessage: 'hello' })).toEqual({
      alreadyRunning: false,
    });
    expect(store.getConversation('t1', c.conversationId)).toMatchObject({
      status: 'STARTING',
      runtimeStatus: 'STATUS$STARTING_RUNTIME',
      sessionApiKey: null,
    });
    expect(runtime.isRunning('t1', c.conversationId)).toBe(true);
    expect(runtime.start('t1', c.conversationId, { initialUserMessage: 'dropped' })).toEqual({
      alreadyRunning: true,
    });

    await live.until((e) => lastState(e) === 'awaiting_user_input');
    expect(store.getConversation('t1', c.conversationId)).toMatchObject({
      status: 'RUNNING',
      runtimeStatus: 'STATUS$READY',
    });
    const statusIds = live.events.flatMap((e) => ('status_update' in e ? [e.id] : []));
    expect(statusIds).toEqual(['STATUS$STARTING_RUNTIME', 'STATUS$READY']);
    expect(agentStates(live.events)).toEqual(['loading', 'running', 'awaiting_user_input']);

    const stored = store.listEvents('t1', c.conversationId, -1);
    const userMessage = stored.find((e) => 'action' in e && e.source === 'user');
    expect(userMessage).toMatchObject({ action: 'message', message: 'hello', args: { content: 'hello' } });
    const reply = stored.find((e) => 'action' in e && e.source === 'agent');
    expect(reply).toMatchObject({
      action: 'message',
      cause: userMessage?.id,
      args: { content: 'You said: hello' },
    });
    // The dropped second initial message never reached the store.
    expect(JSON.stringify(stored)).not.toContain('dropped');
    // Status updates are live only.
    expect(stored.some((e) => 'status_update' in e)).toBe(false);
    for (const e of stored) {
      expect((e as { timestamp?: string }).timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    }
  });

  it('formats event timestamps in local time without a timezone', () => {
    const date = new Date(2025, 7, 14, 12, 0, 0, 123);
    expect(localEventTimestamp(date)).toBe('2025-08-14T12:00:00.123000');
  });

  it('runs the command language: run, think, title, error, finish', async () => {
    const { store, runtime } = setup();
    const c = conversation('t1', 2);
    store.insertConversation(c);
    const live = collect(runtime, 't1', c.conversationId);
    runtime.start('t1', c.conversationId);
    await live.until((e) => lastState(e) === 'awaiting_user_input');
    const id = c.conversationId;
    const say = async (content: string, final = 'awaiting_user_input') => {
      const before = live.events.length;
      const result = runtime.acceptUserAction('t1', id, {
        action: 'message',
        args: { content, image_urls: [], file_urls: [], timestamp: new Date().toISOString() },
      });
      if (!result.ok) throw new Error(result.reason);
      await live.until((e) => e.length > before && lastState(e.slice(before)) === final);
      return { echo: result.event, events: live.events.slice(before) };
    };

    const ok = await say('run: echo hi there');
    expect(ok.echo).toMatchObject({
      source: 'user',
      action: 'message',
      args: { content: 'run: echo hi there' },
    });
    const runAction = ok.events.find((e) => 'action' in e && e.action === 'run');
    expect(runAction).toMatchObject({
      source: 'agent',
      cause: ok.echo.id,
      args: { command: 'echo hi there' },
    });
    expect(ok.events.find((e) => 'observation' in e && e.observation === 'run')).toMatchObject({
      cause: (runAction as { id: number }).id,
      content: 'hi there',
      success: true,
      extras: { command: 'echo hi there', metadata: { exit_code: 0 } },
    });

    const failed = await say('run: exit 3');
    expect(failed.events.find((e) => 'observation' in e && e.observation === 'run')).toMatchObject({
      success: false,
      extras: { metadata: { exit_code: 3 } },
    });

    const think = await say('think: plan the work');
    expect(think.events.find((e) => 'action' in e && e.action === 'think')).toMatchObject({
      args: { thought: 'plan the work' },
      cause: think.echo.id,
    });

    const title = await say('title: Fix the build');
    expect(title.events).toContainEqual({
      status_update: true,
      type: 'info',
      message: id,
      conversation_title: 'Fix the build',
    });
    expect(store.getConversation('t1', id)?.title).toBe('Fix the build');

    const error = await say('error: disk full');
    expect(error.events.find((e) => 'observation' in e && e.observation === 'error')).toMatchObject({
      content: 'disk full',
    });

    const finish = await say('finish: all done', 'finished');
    expect(finish.events.find((e) => 'action' in e && e.action === 'finish')).toMatchObject({
      args: { final_thought: 'all done' },
      cause: finish.echo.id,
    });
  });

  it('refuses garbage actions without storing anything', () => {
    const { store, runtime } = setup();
    const c = conversation('t1', 3);
    store.insertConversation(c);
    for (const garbage of [
      null,
      'message',
      42,
      [],
      { action: 'message' },
      { action: 'message', args: { content: 5 } },
      { action: 'change_agent_state', args: { agent_state: 'loading' } },
      { action: 'run', args: { command: 'rm -rf /' } },
    ]) {
      const result = runtime.acceptUserAction('t1', c.conversationId, garbage);
      expect(result.ok).toBe(false);
    }
    expect(store.listEvents('t1', c.conversationId, -1)).toEqual([]);
    expect(runtime.isRunning('t1', c.conversationId)).toBe(false);
    // Another tenant cannot act on the conversation.
    const foreign = runtime.acceptUserAction('t2', c.conversationId, {
      action: 'message',
      args: { content: 'hi' },
    });
    expect(foreign).toEqual({ ok: false, reason: 'conversation not found' });
  });

  it('change_agent_state stopped stops the loop with a closing observation that is not stored', async () => {
    const { store, runtime } = setup({ nestedRuntime: true });
    const c = conversation('t1', 4);
    store.insertConversation(c);
    const live = collect(runtime, 't1', c.conversationId);
    runtime.start('t1', c.conversationId);
    await live.until((e) => lastState(e) === 'awaiting_user_input');
    const key = store.getConversation('t1', c.conversationId)?.sessionApiKey;
    expect(key).toMatch(/^[\w-]{20,}$/);
    expect(runtime.tenantForSessionKey(c.conversationId, key ?? undefined)).toBe('t1');
    expect(runtime.tenantForSessionKey(c.conversationId, 'wrong')).toBeNull();

    const result = runtime.acceptUserAction('t1', c.conversationId, {
      action: 'change_agent_state',
      args: { agent_state: 'stopped' },
    });
    expect(result.ok).toBe(true);
    expect(runtime.isRunning('t1', c.conversationId)).toBe(false);
    expect(store.getConversation('t1', c.conversationId)).toMatchObject({
      status: 'STOPPED',
      runtimeStatus: null,
      sessionApiKey: null,
    });
    expect(runtime.tenantForSessionKey(c.conversationId, key ?? undefined)).toBeNull();
    expect(live.events.at(-1)).toEqual({
      message: '',
      observation: 'agent_state_changed',
      content: '',
      extras: { agent_state: 'stopped', reason: '' },
    });
    const stored = store.listEvents('t1', c.conversationId, -1);
    expect(stored.at(-1)).toMatchObject({
      observation: 'agent_state_changed',
      extras: { agent_state: 'stopped' },
    });
    expect(stored.at(-1)?.id).toBeTypeOf('number');
    expect(stored.at(-2)).toMatchObject({ source: 'user', action: 'change_agent_state' });
  });

  it('plays replay_json back with new ids and remapped causes', async () => {
    const { store, runtime } = setup();
    const recorded = [
      {
        id: 40,
        timestamp: '2025-01-01T00:00:00',
        source: 'user',
        message: 'ls',
        action: 'message',
        args: { content: 'ls' },
      },
      { id: 41, source: 'agent', cause: 40, message: '', action: 'run', args: { command: 'ls' } },
      {
        id: 42,
        source: 'agent',
        cause: 41,
        observation: 'run',
        content: 'a.txt',
        extras: { metadata: { exit_code: 0 } },
        success: true,
      },
      { not: 'an event' },
    ];
    const c = conversation('t1', 5, { request: { replay_json: JSON.stringify(recorded) } });
    store.insertConversation(c);
    const live = collect(runtime, 't1', c.conversationId);
    runtime.start('t1', c.conversationId);
    await live.until((e) => lastState(e) === 'awaiting_user_input');
    const stored = store.listEvents('t1', c.conversationId, -1);
    const replayed = stored.filter((e) => !('observation' in e && e.observation === 'agent_state_changed'));
    expect(
      replayed.map((e) => ('action' in e ? e.action : 'observation' in e ? e.observation : '?')),
    ).toEqual(['message', 'run', 'run']);
    const [message, run, output] = replayed;
    expect(message?.id).not.toBe(40);
    expect(run).toMatchObject({ cause: message?.id });
    expect(output).toMatchObject({ cause: run?.id, content: 'a.txt', success: true });
    expect((message as { timestamp?: string }).timestamp).not.toBe('2025-01-01T00:00:00');
  });

  it('stops the oldest loop beyond maxRunningAgents', async () => {
    const { store, runtime } = setup({ maxRunningAgents: 2 });
    const ids = [6, 7, 8].map((n) => {
      const c = conversation('t1', n);
      store.insertConversation(c);
      return c.conversationId;
    });
    for (const id of ids) runtime.start('t1', id);
    expect(ids.map((id) => runtime.isRunning('t1', id))).toEqual([false, true, true]);
    expect(store.getConversation('t1', ids[0] ?? '')?.status).toBe('STOPPED');
  });

  it('continues event numbering after a restart and counts connections per conversation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runtime-test-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const first = setup({ dir });
    const c = conversation('t1', 9);
    first.store.insertConversation(c);
    const live = collect(first.runtime, 't1', c.conversationId);
    first.runtime.start('t1', c.conversationId, { initialUserMessage: 'one' });
    await live.until((e) => lastState(e) === 'awaiting_user_input');
    const lastId = first.store.listEvents('t1', c.conversationId, -1).at(-1)?.id ?? -1;
    await first.runtime.close();
    expect(first.store.getConversation('t1', c.conversationId)?.status).toBe('STOPPED');
    first.database.close(); // a second close() when the test finishes is a no-op

    const second = setup({ dir });
    const result = second.runtime.acceptUserAction('t1', c.conversationId, {
      action: 'message',
      args: { content: 'two' },
    });
    expect(result.ok && result.event.id).toBe(lastId + 1);

    second.runtime.addConnection('t1', c.conversationId);
    second.runtime.addConnection('t1', c.conversationId);
    second.runtime.removeConnection('t1', c.conversationId);
    expect(second.runtime.connectionCount('t1', c.conversationId)).toBe(1);
    expect(second.runtime.connectionCount('t2', c.conversationId)).toBe(0);
  });
});
