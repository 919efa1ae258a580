import { describe, expect, it } from 'vitest';
import type { SdkEventRecord } from '../../src/contract/v1/events.ts';
import { localServiceForTest } from '../helpers/local-service.ts';
import { agentEvents, agentRest, startConversation, userMessage, waitForStatus } from './v1-harness.ts';

// The V1 face's scripted agent answers the V0 scripts with SDK events shaped as agent server v1.43.1
// sends them: dashed uuid4 ids, naive local timestamps, no nulls, `kind` last.

const DASHED_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NAIVE_LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?$/;

function hasNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  return Object.values(value as object).some(hasNull);
}

/** The events that answer one message (after it, up to the final status). */
async function answerTo(text: string) {
  const service = await localServiceForTest({ api: 'v1' });
  const { conversation } = await startConversation(service.url, {});
  const before = (await agentEvents(conversation)).length;
  expect(
    (await agentRest(conversation, '/events', { method: 'POST', body: userMessage(text, true) })).status,
  ).toBe(200);
  await waitForStatus(conversation, 'finished');
  const events = (await agentEvents(conversation)).slice(before);
  return { conversation, events };
}

const shape = (e: SdkEventRecord) =>
  e.kind === 'ConversationStateUpdateEvent' ? `${e.kind}:${String(e.value)}` : e.kind;

describe('V1 events of the scripted agent', () => {
  it('a new conversation begins with its system prompt; every event has the wire conventions', async () => {
    const { events } = await answerTo('run: echo hi');
    const service = await localServiceForTest({ api: 'v1' });
    const { conversation } = await startConversation(service.url, {
      initial_message: { content: [{ type: 'text', text: 'hello' }] },
    });
    await waitForStatus(conversation, 'finished');
    const all = await agentEvents(conversation);
    expect(all.map(shape)).toEqual([
      'SystemPromptEvent',
      'MessageEvent',
      'ConversationStateUpdateEvent:running',
      'MessageEvent',
      'ConversationStateUpdateEvent:finished',
    ]);
    for (const event of [...all, ...events]) {
      expect(event.id).toMatch(DASHED_UUID);
      expect(event.timestamp).toMatch(NAIVE_LOCAL);
      expect(Object.keys(event).at(-1)).toBe('kind');
      expect(hasNull(event), JSON.stringify(event)).toBe(false);
    }
    const reply = all[3] as Extract<SdkEventRecord, { kind: 'MessageEvent' }>;
    expect(reply).toMatchObject({
      source: 'agent',
      llm_message: {
        role: 'assistant',
        content: [{ cache_prompt: false, type: 'text', text: 'You said: hello' }],
      },
    });
    expect(reply.llm_response_id).toMatch(/^chatcmpl-/);
    // Timestamps order like the log (the socket's after_timestamp compares them as text).
    const stamps = all.map((e) => e.timestamp);
    expect([...stamps].sort()).toEqual(stamps);
  });

  it('run: is a terminal action and its observation with the exit code', async () => {
    const { events } = await answerTo('run: exit 3');
    expect(events.map(shape)).toEqual([
      'MessageEvent',
      'ConversationStateUpdateEvent:running',
      'ActionEvent',
      'ObservationEvent',
      'ConversationStateUpdateEvent:finished',
    ]);
    const [, , action, observation] = events as [
      SdkEventRecord,
      SdkEventRecord,
      Extract<SdkEventRecord, { kind: 'ActionEvent' }>,
      Extract<SdkEventRecord, { kind: 'ObservationEvent' }>,
    ];
    expect(action).toMatchObject({
      source: 'agent',
      action: { command: 'exit 3', is_input: false, reset: false, kind: 'TerminalAction' },
      tool_name: 'terminal',
      tool_call: { name: 'terminal', arguments: '{"command": "exit 3"}', origin: 'completion' },
      security_risk: 'LOW',
    });
    expect(action.tool_call.id).toBe(action.tool_call_id);
    expect(observation).toMatchObject({
      source: 'environment',
      tool_name: 'terminal',
      tool_call_id: action.tool_call_id,
      action_id: action.id,
      observation: {
        kind: 'TerminalObservation',
        command: 'exit 3',
        exit_code: 3,
        is_error: false,
        timeout: false,
      },
    });
  });

  it.each([
    ['think: ponder', 'ThinkAction', 'ThinkObservation', 'Your thought has been logged.'],
    ['finish: all done', 'FinishAction', 'FinishObservation', 'all done'],
    [
      'edit: app.py',
      'FileEditorAction',
      'FileEditorObservation',
      'File created successfully at: /workspace/project/app.py',
    ],
  ])('%s is an action and its observation', async (text, actionKind, observationKind, observed) => {
    const { events } = await answerTo(text);
    const action = events.find((e) => e.kind === 'ActionEvent') as Extract<
      SdkEventRecord,
      { kind: 'ActionEvent' }
    >;
    const observation = events.find((e) => e.kind === 'ObservationEvent') as Extract<
      SdkEventRecord,
      { kind: 'ObservationEvent' }
    >;
    expect(action.action?.kind).toBe(actionKind);
    expect(observation.observation.kind).toBe(observationKind);
    expect(observation.observation.content).toEqual([{ cache_prompt: false, type: 'text', text: observed }]);
    expect(observation.action_id).toBe(action.id);
  });

  it('error: is an AgentErrorEvent; title: renames without a socket push', async () => {
    const failed = await answerTo('error: boom');
    expect(failed.events.find((e) => e.kind === 'AgentErrorEvent')).toMatchObject({
      source: 'agent',
      error: 'boom',
      classification: { kind: 'agent_action', retryable: true, user_action: 'retry' },
    });
    const renamed = await answerTo('title: New name');
    expect(renamed.events.map(shape)).toContain('MessageEvent');
    const info = await agentRest<{ title: string }>(renamed.conversation, '');
    expect(info.body.title).toBe('New name');
  });
});

describe('V1 errors and confirmation', () => {
  it('fail: is a ConversationErrorEvent and ends the run in error', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const { conversation } = await startConversation(service.url);
    await agentRest(conversation, '/events', {
      method: 'POST',
      body: userMessage('fail: the LLM is down', true),
    });
    await waitForStatus(conversation, 'error');
    const events = await agentEvents(conversation);
    expect(events.map(shape).slice(-2)).toEqual([
      'ConversationErrorEvent',
      'ConversationStateUpdateEvent:error',
    ]);
    expect(events.at(-2)).toMatchObject({
      source: 'environment',
      code: 'LocalAgentError',
      detail: 'the LLM is down',
      classification: { kind: 'unknown', retryable: false, user_action: 'none' },
    });
  });

  it('under AlwaysConfirm an action waits; accepting runs it, rejecting is a UserRejectObservation', async () => {
    const service = await localServiceForTest({ api: 'v1' });
    const { conversation } = await startConversation(service.url);
    const policy = await agentRest(conversation, '/confirmation_policy', {
      method: 'POST',
      body: { policy: { kind: 'AlwaysConfirm' } },
    });
    expect(policy).toMatchObject({ status: 200, body: { success: true } });
    const bad = await agentRest(conversation, '/confirmation_policy', {
      method: 'POST',
      body: { policy: { kind: 'x' } },
    });
    expect(bad.status).toBe(422);
    expect((await agentRest(conversation, '')).body).toMatchObject({
      confirmation_policy: { kind: 'AlwaysConfirm' },
    });

    await agentRest(conversation, '/events', { method: 'POST', body: userMessage('run: echo ok', true) });
    await waitForStatus(conversation, 'waiting_for_confirmation');
    let events = await agentEvents(conversation);
    expect(events.map(shape).slice(-2)).toEqual([
      'ActionEvent',
      'ConversationStateUpdateEvent:waiting_for_confirmation',
    ]);
    const respond = (body: Record<string, unknown>) =>
      agentRest(conversation, '/events/respond_to_confirmation', { method: 'POST', body });
    expect(await respond({ accept: true })).toMatchObject({ status: 200, body: { success: true } });
    await waitForStatus(conversation, 'finished');
    events = await agentEvents(conversation);
    expect(events.map(shape).slice(-3)).toEqual([
      'ConversationStateUpdateEvent:running',
      'ObservationEvent',
      'ConversationStateUpdateEvent:finished',
    ]);

    await agentRest(conversation, '/events', { method: 'POST', body: userMessage('think: risky', true) });
    await waitForStatus(conversation, 'waiting_for_confirmation');
    const action = (await agentEvents(conversation)).findLast((e) => e.kind === 'ActionEvent') as Extract<
      SdkEventRecord,
      { kind: 'ActionEvent' }
    >;
    await respond({ accept: false, reason: 'Not now' });
    await waitForStatus(conversation, 'finished');
    events = await agentEvents(conversation);
    expect(events.find((e) => e.kind === 'UserRejectObservation')).toMatchObject({
      source: 'environment',
      tool_name: 'think',
      tool_call_id: action.tool_call_id,
      action_id: action.id,
      rejection_reason: 'Not now',
      rejection_source: 'user',
    });
    expect(events.some((e) => e.kind === 'ObservationEvent' && e.action_id === action.id)).toBe(false);
    expect((await respond({})).status).toBe(422);
  });
});
