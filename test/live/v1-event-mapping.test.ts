/**
 * V1 (SDK) event payloads -> the port's events, one row per kind the graph has a type for, plus what
 * has none (OTHER with the raw object), the never-delivered `full_state`, and payloads a newer or broken
 * agent server may send (no id, naive timestamps, left-out fields, unknown statuses). The file-changing
 * tools have a row each, whole events as an agent server v1.43.1 sends them, typed by the contract.
 * Through the gateway, test/live/v1-live.test.ts and test/gateway/both-apis.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type {
  AcpToolCallEventRecord,
  ApplyPatchActionRecord,
  ApplyPatchObservationRecord,
  EditActionRecord,
  EditObservationRecord,
  FileEditorActionRecord,
  FileEditorObservationRecord,
  PlanningFileEditorActionRecord,
  PlanningFileEditorObservationRecord,
  WriteFileActionRecord,
  WriteFileObservationRecord,
} from '../../src/contract/v1/events.ts';
import type { EventKindFields, EventPhase } from '../../src/upstream/port/events.ts';
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
const text = (value: string) => [{ type: 'text' as const, text: value, cache_prompt: false }];

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

const ACTION_ID = '2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901';
const CALL = 'call_5Fe1';

/** An ActionEvent as an agent server sends it: the tool call's arguments are the action's fields. */
function actionEvent<A extends { kind: string }>(toolName: string, action: A, thought: string) {
  const { kind: _kind, ...args } = action;
  return sdk('ActionEvent', {
    source: 'agent',
    thought: text(thought),
    thinking_blocks: [],
    action,
    tool_name: toolName,
    tool_call_id: CALL,
    tool_call: { id: CALL, name: toolName, arguments: JSON.stringify(args), origin: 'completion' },
    llm_response_id: 'chatcmpl-91aZ',
    security_risk: 'LOW',
    summary: thought,
  });
}

/** The ObservationEvent answering {@link actionEvent}. */
function observationEvent<O extends { kind: string }>(toolName: string, observation: O) {
  return sdk('ObservationEvent', {
    source: 'environment',
    tool_name: toolName,
    tool_call_id: CALL,
    observation,
    action_id: ACTION_ID,
    extended_content: [],
  });
}

/** An ACP agent's tool call (an Event of its own, neither action nor observation). */
function acpToolCall(call: Omit<AcpToolCallEventRecord, 'id' | 'timestamp' | 'kind'>) {
  return sdk('ACPToolCallEvent', call);
}

/** The whole mapped event: the common fields every V1 event gets, and the kind's own. */
function mapped(
  payload: ReturnType<typeof sdk>,
  phase: EventPhase,
  upstreamKind: string,
  message: string,
  fields: EventKindFields,
) {
  return {
    eventId: null,
    cursor: v1Cursor({ id: ID, timestamp: AT, kind: payload.kind }),
    timestamp: '2026-05-01T10:00:00.250000Z',
    source: payload.source,
    message,
    cause: null,
    phase,
    upstreamKind,
    raw: payload,
    ...fields,
  };
}

const APP = '/workspace/project/app.py';
const PLAN = '/workspace/project/.agents_tmp/PLAN.md';
const PATCH = [
  '*** Begin Patch',
  '*** Add File: docs/NOTES.md',
  '+# Notes',
  '+Run `make test`.',
  '*** Update File: src/app.py',
  '*** Move to: src/main.py',
  '@@ def greet():',
  "-    print('hi')",
  "+    print('hello')",
  '*** Delete File: old.txt',
  '*** End Patch',
].join('\n');

describe('V1 file changes onto the file kinds, with the paths they change', () => {
  it.each([
    {
      name: 'file_editor view: a read, no paths',
      payload: actionEvent(
        'file_editor',
        { kind: 'FileEditorAction', command: 'view', path: APP } satisfies FileEditorActionRecord,
        'Let me look at app.py.',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'FileEditorAction', 'Let me look at app.py.', {
          kind: 'FILE_READ',
          path: APP,
          content: null,
        }),
    },
    {
      name: 'file_editor create: a whole file written',
      payload: actionEvent(
        'file_editor',
        {
          kind: 'FileEditorAction',
          command: 'create',
          path: APP,
          file_text: "print('hi')\n",
        } satisfies FileEditorActionRecord,
        'Create app.py.',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'FileEditorAction', 'Create app.py.', {
          kind: 'FILE_WRITE',
          path: APP,
          content: "print('hi')\n",
          paths: [APP],
        }),
    },
    {
      name: 'file_editor str_replace',
      payload: actionEvent(
        'file_editor',
        {
          kind: 'FileEditorAction',
          command: 'str_replace',
          path: APP,
          old_str: "print('hi')",
          new_str: "print('hello')",
        } satisfies FileEditorActionRecord,
        'Say hello.',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'FileEditorAction', 'Say hello.', {
          kind: 'FILE_EDIT',
          path: APP,
          diff: null,
          command: 'str_replace',
          oldContent: "print('hi')",
          newContent: "print('hello')",
          paths: [APP],
        }),
    },
    {
      name: 'file_editor insert',
      payload: actionEvent(
        'file_editor',
        {
          kind: 'FileEditorAction',
          command: 'insert',
          path: APP,
          new_str: 'import sys',
          insert_line: 0,
        } satisfies FileEditorActionRecord,
        'Import sys.',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'FileEditorAction', 'Import sys.', {
          kind: 'FILE_EDIT',
          path: APP,
          diff: null,
          command: 'insert',
          oldContent: null,
          newContent: 'import sys',
          paths: [APP],
        }),
    },
    {
      name: "file_editor's observation, with the text before and after",
      payload: observationEvent('file_editor', {
        kind: 'FileEditorObservation',
        content: text(`The file ${APP} has been edited.`),
        is_error: false,
        command: 'str_replace',
        path: APP,
        prev_exist: true,
        old_content: "print('hi')\n",
        new_content: "print('hello')\n",
      } satisfies FileEditorObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'FileEditorObservation', `The file ${APP} has been edited.`, {
          kind: 'FILE_EDIT',
          path: APP,
          diff: null,
          command: 'str_replace',
          oldContent: "print('hi')\n",
          newContent: "print('hello')\n",
          paths: [APP],
        }),
    },
    {
      name: "file_editor's error: the file named, nothing changed",
      payload: observationEvent('file_editor', {
        kind: 'FileEditorObservation',
        content: text(
          `No replacement was performed, old_str \`print('hey')\` did not appear verbatim in ${APP}.`,
        ),
        is_error: true,
        command: 'str_replace',
        path: APP,
        prev_exist: true,
      } satisfies FileEditorObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(
          p,
          'OBSERVATION',
          'FileEditorObservation',
          `No replacement was performed, old_str \`print('hey')\` did not appear verbatim in ${APP}.`,
          {
            kind: 'FILE_EDIT',
            path: APP,
            diff: null,
            command: 'str_replace',
            oldContent: null,
            newContent: null,
            paths: [],
          },
        ),
    },
    {
      name: "the planning agent's editor on its PLAN.md",
      payload: actionEvent(
        'planning_file_editor',
        {
          kind: 'PlanningFileEditorAction',
          command: 'str_replace',
          path: PLAN,
          old_str: '## Steps\n',
          new_str: '## Steps\n1. Rename greet.\n',
        } satisfies PlanningFileEditorActionRecord,
        'Write the plan.',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'PlanningFileEditorAction', 'Write the plan.', {
          kind: 'FILE_EDIT',
          path: PLAN,
          diff: null,
          command: 'str_replace',
          oldContent: '## Steps\n',
          newContent: '## Steps\n1. Rename greet.\n',
          paths: [PLAN],
        }),
    },
    {
      name: "the planning editor's observation (no contents)",
      payload: observationEvent('planning_file_editor', {
        kind: 'PlanningFileEditorObservation',
        content: text(`The file ${PLAN} has been edited.`),
        is_error: false,
        command: 'str_replace',
        path: PLAN,
        prev_exist: true,
      } satisfies PlanningFileEditorObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'PlanningFileEditorObservation', `The file ${PLAN} has been edited.`, {
          kind: 'FILE_EDIT',
          path: PLAN,
          diff: null,
          command: 'str_replace',
          oldContent: null,
          newContent: null,
          paths: [PLAN],
        }),
    },
    {
      name: 'write_file: a whole file written, its path as the model gave it',
      payload: actionEvent(
        'write_file',
        {
          kind: 'WriteFileAction',
          file_path: 'src/config.py',
          content: 'DEBUG = False\n',
        } satisfies WriteFileActionRecord,
        'Write the config.',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'WriteFileAction', 'Write the config.', {
          kind: 'FILE_WRITE',
          path: 'src/config.py',
          content: 'DEBUG = False\n',
          paths: ['src/config.py'],
        }),
    },
    {
      name: "write_file's observation of a new file: the resolved path",
      payload: observationEvent('write_file', {
        kind: 'WriteFileObservation',
        content: text('Created file: /workspace/project/src/config.py'),
        is_error: false,
        file_path: '/workspace/project/src/config.py',
        is_new_file: true,
        new_content: 'DEBUG = False\n',
      } satisfies WriteFileObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'WriteFileObservation', 'Created file: /workspace/project/src/config.py', {
          kind: 'FILE_EDIT',
          path: '/workspace/project/src/config.py',
          diff: null,
          command: null,
          oldContent: null,
          newContent: 'DEBUG = False\n',
          paths: ['/workspace/project/src/config.py'],
        }),
    },
    {
      name: 'edit: a replacement',
      payload: actionEvent(
        'edit',
        {
          kind: 'EditAction',
          file_path: APP,
          old_string: "print('hi')",
          new_string: "print('hello')",
          expected_replacements: 1,
        } satisfies EditActionRecord,
        'Say hello.',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'EditAction', 'Say hello.', {
          kind: 'FILE_EDIT',
          path: APP,
          diff: null,
          command: null,
          oldContent: "print('hi')",
          newContent: "print('hello')",
          paths: [APP],
        }),
    },
    {
      name: "edit's observation",
      payload: observationEvent('edit', {
        kind: 'EditObservation',
        content: text(`Successfully edited ${APP} (1 replacement(s))`),
        is_error: false,
        file_path: APP,
        is_new_file: false,
        replacements_made: 1,
        old_content: "print('hi')\n",
        new_content: "print('hello')\n",
      } satisfies EditObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'EditObservation', `Successfully edited ${APP} (1 replacement(s))`, {
          kind: 'FILE_EDIT',
          path: APP,
          diff: null,
          command: null,
          oldContent: "print('hi')\n",
          newContent: "print('hello')\n",
          paths: [APP],
        }),
    },
    {
      name: "edit's error keeps its file_path and changed nothing",
      payload: observationEvent('edit', {
        kind: 'EditObservation',
        content: text(`Error: Could not find the string to replace. 0 occurrences found in ${APP}.`),
        is_error: true,
        file_path: APP,
        is_new_file: false,
        replacements_made: 0,
      } satisfies EditObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(
          p,
          'OBSERVATION',
          'EditObservation',
          `Error: Could not find the string to replace. 0 occurrences found in ${APP}.`,
          {
            kind: 'FILE_EDIT',
            path: APP,
            diff: null,
            command: null,
            oldContent: null,
            newContent: null,
            paths: [],
          },
        ),
    },
    {
      name: 'apply_patch of several files: each path it names, a move as its new name too',
      payload: actionEvent(
        'apply_patch',
        { kind: 'ApplyPatchAction', patch: PATCH } satisfies ApplyPatchActionRecord,
        'Patch the project.',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'ApplyPatchAction', 'Patch the project.', {
          kind: 'FILE_EDIT',
          path: null,
          diff: null,
          command: null,
          oldContent: null,
          newContent: null,
          paths: ['docs/NOTES.md', 'src/app.py', 'src/main.py', 'old.txt'],
        }),
    },
    {
      name: 'apply_patch of one file: that path',
      payload: actionEvent(
        'apply_patch',
        {
          kind: 'ApplyPatchAction',
          patch:
            "*** Begin Patch\n*** Update File: src/app.py\n@@\n-print('hi')\n+print('hello')\n*** End Patch",
        } satisfies ApplyPatchActionRecord,
        '',
      ),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'ApplyPatchAction', '', {
          kind: 'FILE_EDIT',
          path: 'src/app.py',
          diff: null,
          command: null,
          oldContent: null,
          newContent: null,
          paths: ['src/app.py'],
        }),
    },
    {
      name: "apply_patch's observation: the commit's paths",
      payload: observationEvent('apply_patch', {
        kind: 'ApplyPatchObservation',
        content: text('Done!'),
        is_error: false,
        message: 'Done!',
        fuzz: 0,
        commit: {
          changes: {
            'docs/NOTES.md': { type: 'add', new_content: '# Notes\nRun `make test`.' },
            'src/app.py': {
              type: 'update',
              old_content: "def greet():\n    print('hi')\n",
              new_content: "def greet():\n    print('hello')\n",
              move_path: 'src/main.py',
            },
            'old.txt': { type: 'delete', old_content: 'obsolete\n' },
          },
        },
      } satisfies ApplyPatchObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'ApplyPatchObservation', 'Done!', {
          kind: 'FILE_EDIT',
          path: null,
          diff: null,
          command: null,
          oldContent: null,
          newContent: null,
          paths: ['docs/NOTES.md', 'src/app.py', 'src/main.py', 'old.txt'],
        }),
    },
    {
      name: "apply_patch's observation of one file: its text before and after",
      payload: observationEvent('apply_patch', {
        kind: 'ApplyPatchObservation',
        content: text('Done!'),
        is_error: false,
        message: 'Done!',
        fuzz: 1,
        commit: {
          changes: {
            'src/app.py': { type: 'update', old_content: "print('hi')\n", new_content: "print('hello')\n" },
          },
        },
      } satisfies ApplyPatchObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'ApplyPatchObservation', 'Done!', {
          kind: 'FILE_EDIT',
          path: 'src/app.py',
          diff: null,
          command: null,
          oldContent: "print('hi')\n",
          newContent: "print('hello')\n",
          paths: ['src/app.py'],
        }),
    },
    {
      name: "apply_patch's error: no commit, nothing changed",
      payload: observationEvent('apply_patch', {
        kind: 'ApplyPatchObservation',
        content: text('Update File Error: Missing File: src/gone.py'),
        is_error: true,
        message: '',
        fuzz: 0,
      } satisfies ApplyPatchObservationRecord),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'ApplyPatchObservation', 'Update File Error: Missing File: src/gone.py', {
          kind: 'FILE_EDIT',
          path: null,
          diff: null,
          command: null,
          oldContent: null,
          newContent: null,
          paths: [],
        }),
    },
    {
      name: "an ACP agent's edit as it starts: the action half, its diff's path",
      payload: acpToolCall({
        source: 'agent',
        tool_call_id: 'toolu_01Edit',
        title: `Edit \`${APP}\``,
        status: 'pending',
        tool_kind: 'edit',
        raw_input: { file_path: APP, old_string: "print('hi')", new_string: "print('hello')" },
        content: [{ type: 'diff', path: APP, old_text: "print('hi')", new_text: "print('hello')" }],
        is_error: false,
      }),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'ACTION', 'ACPToolCallEvent', `Edit \`${APP}\``, {
          kind: 'FILE_EDIT',
          path: APP,
          diff: null,
          command: null,
          oldContent: "print('hi')",
          newContent: "print('hello')",
          paths: [APP],
        }),
    },
    {
      name: "an ACP agent's write once completed, its diff in ACP's camelCase: the observation half",
      payload: acpToolCall({
        source: 'agent',
        tool_call_id: 'toolu_02Write',
        title: 'Write /workspace/project/README.md',
        status: 'completed',
        tool_kind: 'edit',
        content: [{ type: 'diff', path: '/workspace/project/README.md', newText: '# Widgets\n' }],
        is_error: false,
      }),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'ACPToolCallEvent', 'Write /workspace/project/README.md', {
          kind: 'FILE_EDIT',
          path: '/workspace/project/README.md',
          diff: null,
          command: null,
          oldContent: null,
          newContent: '# Widgets\n',
          paths: ['/workspace/project/README.md'],
        }),
    },
    {
      name: "an ACP agent's failed edit changed nothing",
      payload: acpToolCall({
        source: 'agent',
        tool_call_id: 'toolu_01Edit',
        title: `Edit \`${APP}\``,
        status: 'failed',
        tool_kind: 'edit',
        raw_output: 'String to replace not found in file.',
        content: [{ type: 'diff', path: APP, old_text: "print('hey')", new_text: "print('hello')" }],
        is_error: true,
      }),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'OBSERVATION', 'ACPToolCallEvent', `Edit \`${APP}\``, {
          kind: 'FILE_EDIT',
          path: APP,
          diff: null,
          command: null,
          oldContent: "print('hey')",
          newContent: "print('hello')",
          paths: [],
        }),
    },
    {
      name: "an ACP agent's other tool call (no diff): OTHER",
      payload: acpToolCall({
        source: 'agent',
        tool_call_id: 'toolu_03Read',
        title: `Read ${APP}`,
        status: 'completed',
        tool_kind: 'read',
        raw_input: { file_path: APP },
        content: [{ type: 'content', content: { type: 'text', text: "print('hello')\n" } }],
        is_error: false,
      }),
      expected: (p: ReturnType<typeof sdk>) =>
        mapped(p, 'UNKNOWN', 'ACPToolCallEvent', '', { kind: 'OTHER' }),
    },
  ])('$name', ({ payload, expected }) => {
    const event = mapV1Event(payload, 'UTC');
    expect(event).toEqual(expected(payload));
    // The common fields, then the kind's, in that order (toEqual alone ignores the order).
    expect(Object.keys(event ?? {})).toEqual(Object.keys(expected(payload)));
    expect(Object.isFrozen(event?.raw)).toBe(true);
  });
});
