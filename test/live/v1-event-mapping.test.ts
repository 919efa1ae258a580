/**
 * V1 (SDK) event payloads -> the port's events, one row per kind the graph has a type for, plus what
 * has none (OTHER with the raw object), the never-delivered `full_state`, and payloads a newer or broken
 * agent server may send (no id, naive timestamps, left-out fields, unknown statuses).
 * Through the gateway, test/live/v1-live.test.ts and test/gateway/both-apis.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { BEFORE_FIRST, v1Cursor } from '../../src/upstream/v1/event-cursor.ts';
import { mapV1Event } from '../../src/upstream/v1/events.ts';

const ID = '5b2c1f0e-0000-4000-8000-000000000001';
const AT = '2026-05-01T10:00:00.250000';

/** An SDK event of `kind` with the id and (naive) timestamp every stored event has. */
const sdk = (kind: string, fields: { source?: string } & Record<string, unknown>) => ({
  id: ID,
  timestamp: AT,
  kind,
  ...fields,
});
const text = (value: string) => [{ type: 'text', text: value, cache_prompt: false }];

describe('V1 events onto the graph types', () => {
  it.each([
    {
      name: 'a user message, with its images',
      payload: sdk('MessageEvent', {
        source: 'user',
        llm_message: {
          role: 'user',
          content: [...text('fix it'), { type: 'image', image_urls: ['https://example.com/a.png'] }],
        },
      }),
      expected: { kind: 'USER_MESSAGE', content: 'fix it', imageUrls: ['https://example.com/a.png'] },
    },
    {
      name: 'an agent message',
      payload: sdk('MessageEvent', {
        source: 'agent',
        llm_message: { role: 'assistant', content: text('done') },
      }),
      expected: { kind: 'AGENT_MESSAGE', content: 'done', message: 'done', phase: 'ACTION' },
    },
    {
      name: 'a terminal action, with its thought',
      payload: sdk('ActionEvent', {
        source: 'agent',
        thought: text('list files'),
        action: { kind: 'TerminalAction', command: 'ls', is_input: false },
      }),
      expected: {
        kind: 'COMMAND',
        command: 'ls',
        thought: 'list files',
        isInput: false,
        upstreamKind: 'TerminalAction',
      },
    },
    {
      name: 'a terminal observation that failed',
      payload: sdk('ObservationEvent', {
        source: 'environment',
        observation: { kind: 'TerminalObservation', command: 'false', content: text(''), exit_code: 1 },
      }),
      expected: {
        kind: 'COMMAND_OUTPUT',
        command: 'false',
        exitCode: 1,
        success: false,
        phase: 'OBSERVATION',
      },
    },
    {
      name: 'a terminal observation with the exit code in its metadata (older SDKs)',
      payload: sdk('ObservationEvent', {
        source: 'environment',
        observation: { kind: 'ExecuteBashObservation', content: text('hi'), metadata: { exit_code: 0 } },
      }),
      expected: { kind: 'COMMAND_OUTPUT', output: 'hi', exitCode: 0, success: true },
    },
    {
      name: 'a command still running after the soft timeout (-1): neither success nor failure',
      payload: sdk('ObservationEvent', {
        source: 'environment',
        observation: { kind: 'TerminalObservation', content: text('...'), exit_code: -1 },
      }),
      expected: { kind: 'COMMAND_OUTPUT', exitCode: -1, success: null },
    },
    {
      name: 'a file viewed',
      payload: sdk('ActionEvent', {
        source: 'agent',
        action: { kind: 'FileEditorAction', command: 'view', path: '/a' },
      }),
      expected: { kind: 'FILE_READ', path: '/a', content: null },
    },
    {
      name: 'a file created',
      payload: sdk('ActionEvent', {
        source: 'agent',
        action: { kind: 'FileEditorAction', command: 'create', path: '/b', file_text: 'x' },
      }),
      expected: { kind: 'FILE_WRITE', path: '/b', content: 'x' },
    },
    {
      name: 'a file edited',
      payload: sdk('ActionEvent', {
        source: 'agent',
        action: { kind: 'FileEditorAction', command: 'str_replace', path: '/c', old_str: 'a', new_str: 'b' },
      }),
      expected: { kind: 'FILE_EDIT', path: '/c', command: 'str_replace', oldContent: 'a', newContent: 'b' },
    },
    {
      name: "a file edit's observation",
      payload: sdk('ObservationEvent', {
        source: 'environment',
        observation: {
          kind: 'FileEditorObservation',
          command: 'str_replace',
          path: '/c',
          old_content: 'a',
          new_content: 'b',
          content: text('edited'),
        },
      }),
      expected: { kind: 'FILE_EDIT', path: '/c', oldContent: 'a', newContent: 'b', phase: 'OBSERVATION' },
    },
    {
      name: 'a thought',
      payload: sdk('ActionEvent', { source: 'agent', action: { kind: 'ThinkAction', thought: 'hmm' } }),
      expected: { kind: 'THINK', thought: 'hmm' },
    },
    {
      name: 'the finish',
      payload: sdk('ActionEvent', {
        source: 'agent',
        action: { kind: 'FinishAction', message: 'all green' },
      }),
      expected: { kind: 'FINISH', finalThought: 'all green' },
    },
    {
      name: 'browsing',
      payload: sdk('ActionEvent', {
        source: 'agent',
        action: { kind: 'BrowserNavigateAction', url: 'https://example.com' },
      }),
      expected: { kind: 'BROWSE', url: 'https://example.com' },
    },
    {
      name: 'an execution status, as the agent state a V0 client knows',
      payload: sdk('ConversationStateUpdateEvent', {
        source: 'environment',
        key: 'execution_status',
        value: 'idle',
      }),
      expected: { kind: 'AGENT_STATE_CHANGED', state: 'awaiting_user_input', stateRaw: 'idle' },
    },
    {
      name: 'an execution status this gateway does not know: no state, the raw value kept',
      payload: sdk('ConversationStateUpdateEvent', {
        source: 'environment',
        key: 'execution_status',
        value: 'hibernating',
      }),
      expected: { kind: 'AGENT_STATE_CHANGED', state: null, stateRaw: 'hibernating' },
    },
    {
      name: 'another state key: OTHER',
      payload: sdk('ConversationStateUpdateEvent', {
        source: 'environment',
        key: 'confirmation_policy',
        value: { kind: 'AlwaysConfirm' },
      }),
      expected: { kind: 'OTHER', phase: 'STATUS_UPDATE', upstreamKind: 'ConversationStateUpdateEvent' },
    },
    {
      name: 'a pause',
      payload: sdk('PauseEvent', { source: 'user' }),
      expected: { kind: 'AGENT_STATE_CHANGE_REQUESTED', requestedState: 'paused' },
    },
    {
      name: "the agent's error",
      payload: sdk('AgentErrorEvent', {
        source: 'agent',
        error: 'tool failed',
        classification: { error_id: 'E1' },
      }),
      expected: { kind: 'ERROR', message: 'tool failed', errorId: 'E1', phase: 'ERROR' },
    },
    {
      name: "the conversation's error",
      payload: sdk('ConversationErrorEvent', {
        source: 'environment',
        detail: 'LLM down',
        code: 'LLM_ERROR',
      }),
      expected: { kind: 'ERROR', message: 'LLM down', errorId: 'LLM_ERROR' },
    },
    {
      name: 'a rejection (no graph type): OTHER, its reason as the message',
      payload: sdk('UserRejectObservation', { source: 'user', rejection_reason: 'no thanks' }),
      expected: {
        kind: 'OTHER',
        message: 'no thanks',
        upstreamKind: 'UserRejectObservation',
        phase: 'UNKNOWN',
      },
    },
    {
      name: 'an unknown tool: OTHER, named by the action kind',
      payload: sdk('ActionEvent', { source: 'agent', action: { kind: 'GlobAction', pattern: '*.ts' } }),
      expected: { kind: 'OTHER', upstreamKind: 'GlobAction', phase: 'ACTION' },
    },
  ])('$name', ({ payload, expected }) => {
    const event = mapV1Event(payload, 'UTC');
    expect(event).toMatchObject({
      eventId: null,
      cause: null,
      // Naive upstream timestamps are read in the configured zone and answered in UTC, microseconds kept.
      timestamp: '2026-05-01T10:00:00.250000Z',
      cursor: v1Cursor({ id: ID, timestamp: AT, kind: payload.kind }),
      source: payload.source,
      ...expected,
    });
    // Every event keeps the upstream object as it came, frozen (clients read `raw` for what has no field).
    expect(event?.raw).toEqual(payload);
    expect(Object.isFrozen(event?.raw)).toBe(true);
  });

  it('never delivers full_state, nor a payload that is not an object', () => {
    expect(
      mapV1Event(sdk('ConversationStateUpdateEvent', { key: 'full_state', value: {} }), 'UTC'),
    ).toBeNull();
    for (const payload of [null, 'text', 42, [sdk('MessageEvent', {})]])
      expect(mapV1Event(payload, 'UTC')).toBeNull();
  });

  it('reads left-out fields as empty, and an event without an id takes the cursor it follows', () => {
    const follows = v1Cursor({ id: ID, timestamp: AT, kind: 'MessageEvent' });
    const bare = mapV1Event({ kind: 'MessageEvent', source: 'agent' }, 'UTC', follows);
    expect(bare).toMatchObject({
      kind: 'AGENT_MESSAGE',
      content: '',
      imageUrls: [],
      cursor: follows,
      timestamp: null,
    });
    // With no fallback given, it sorts before every stored event.
    expect(mapV1Event({ kind: 'ActionEvent' }, 'UTC')).toMatchObject({
      kind: 'OTHER',
      upstreamKind: 'unknown',
      cursor: v1Cursor(BEFORE_FIRST),
    });
  });

  it('reads naive timestamps in the configured zone', () => {
    const event = mapV1Event(sdk('PauseEvent', { source: 'user' }), 'America/New_York');
    // New York is UTC-4 in May (EDT).
    expect(event?.timestamp).toBe('2026-05-01T14:00:00.250000Z');
  });
});
