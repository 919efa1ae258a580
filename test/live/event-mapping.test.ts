/**
 * Wire -> domain mapping of `oh_event` payloads and the reading of zone-less upstream timestamps.
 */
import { describe, expect, it } from 'vitest';
import type { EventKindFields, EventPhase } from '../../src/upstream/port/events.ts';
import { isKnownTimeZone, upstreamTimestampToUtc } from '../../src/upstream/timestamps.ts';
import { v0Cursor } from '../../src/upstream/v0/event-cursor.ts';
import { mapUpstreamEvent } from '../../src/upstream/v0/events.ts';

describe('upstream timestamps', () => {
  it('reads zone-less values in the configured zone, keeping microseconds', () => {
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00.123456', 'UTC')).toBe('2025-08-14T12:00:00.123456Z');
    // New York is UTC-4 in August (EDT) and UTC-5 in January (EST).
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00.5', 'America/New_York')).toBe(
      '2025-08-14T16:00:00.500Z',
    );
    expect(upstreamTimestampToUtc('2025-01-14T12:00:00', 'America/New_York')).toBe(
      '2025-01-14T17:00:00.000Z',
    );
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00.123456', 'Asia/Kolkata')).toBe(
      '2025-08-14T06:30:00.123456Z',
    );
  });

  it('takes an explicit zone as written and refuses non-timestamps', () => {
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00Z', 'Asia/Tokyo')).toBe('2025-08-14T12:00:00.000Z');
    expect(upstreamTimestampToUtc('2025-08-14T12:00:00+02:00', 'UTC')).toBe('2025-08-14T10:00:00.000Z');
    expect(upstreamTimestampToUtc('yesterday', 'UTC')).toBeNull();
    expect(upstreamTimestampToUtc(undefined, 'UTC')).toBeNull();
    expect(upstreamTimestampToUtc('2025-13-45T99:00:00', 'UTC')).toBeNull();
  });

  it('knows real zones only', () => {
    expect(isKnownTimeZone('Europe/Berlin')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus')).toBe(false);
  });
});

describe('mapUpstreamEvent', () => {
  it('maps the reference shapes to typed events', () => {
    const user = mapUpstreamEvent(
      {
        id: 5,
        timestamp: '2025-08-14T12:00:00.123456',
        source: 'user',
        message: 'hello',
        action: 'message',
        args: { content: 'hello', file_urls: [], image_urls: ['http://x/y.png'], wait_for_response: false },
      },
      'UTC',
    );
    expect(user).toMatchObject({
      kind: 'USER_MESSAGE',
      eventId: 5,
      timestamp: '2025-08-14T12:00:00.123456Z',
      source: 'user',
      phase: 'ACTION',
      upstreamKind: 'message',
      content: 'hello',
      imageUrls: ['http://x/y.png'],
    });

    const output = mapUpstreamEvent(
      {
        id: 7,
        timestamp: '2025-08-14T12:00:02.5',
        source: 'agent',
        message: 'Command `ls` executed with exit code 0.',
        cause: 6,
        observation: 'run',
        content: 'README.md',
        extras: { command: 'ls', metadata: { exit_code: 0 }, hidden: false },
        success: true,
      },
      'UTC',
    );
    expect(output).toMatchObject({
      kind: 'COMMAND_OUTPUT',
      cause: 6,
      phase: 'OBSERVATION',
      command: 'ls',
      output: 'README.md',
      exitCode: 0,
      success: true,
    });

    expect(
      mapUpstreamEvent(
        {
          id: 9,
          observation: 'agent_state_changed',
          content: '',
          extras: { agent_state: 'awaiting_user_input', reason: '' },
        },
        'UTC',
      ),
    ).toMatchObject({
      kind: 'AGENT_STATE_CHANGED',
      state: 'awaiting_user_input',
      timestamp: null,
      source: null,
    });

    expect(
      mapUpstreamEvent(
        { id: 3, observation: 'edit', content: '', extras: { path: '/a.ts', diff: '-a\n+b' } },
        'UTC',
      ),
    ).toMatchObject({ kind: 'FILE_EDIT', path: '/a.ts', diff: '-a\n+b' });
  });

  it('keeps status updates, title changes and errors apart, with no event id', () => {
    expect(
      mapUpstreamEvent({ status_update: true, type: 'info', id: 'STATUS$READY', message: 'Ready' }, 'UTC'),
    ).toMatchObject({
      kind: 'STATUS_UPDATE',
      eventId: null,
      runtimeStatus: 'STATUS$READY',
      statusType: 'info',
    });
    expect(
      mapUpstreamEvent(
        { status_update: true, type: 'info', message: 'abc', conversation_title: 'New title' },
        'UTC',
      ),
    ).toMatchObject({ kind: 'TITLE_CHANGED', title: 'New title', phase: 'STATUS_UPDATE' });
    expect(mapUpstreamEvent({ error: true, message: 'boom' }, 'UTC')).toMatchObject({
      kind: 'ERROR',
      phase: 'ERROR',
      message: 'boom',
    });
  });

  it('maps unknown or future kinds and states to fallbacks instead of failing', () => {
    expect(
      mapUpstreamEvent({ id: 1, source: 'agent', action: 'teleport', args: { where: 'moon' } }, 'UTC'),
    ).toMatchObject({
      kind: 'OTHER',
      upstreamKind: 'teleport',
      phase: 'ACTION',
      raw: { args: { where: 'moon' } },
    });
    expect(
      mapUpstreamEvent(
        { id: 2, observation: 'agent_state_changed', content: '', extras: { agent_state: 'dreaming' } },
        'UTC',
      ),
    ).toMatchObject({ kind: 'AGENT_STATE_CHANGED', state: null, stateRaw: 'dreaming' });
    expect(mapUpstreamEvent({ something: 'new' }, 'UTC')).toMatchObject({ kind: 'OTHER', phase: 'UNKNOWN' });
    expect(mapUpstreamEvent('not an object', 'UTC')).toBeNull();
  });
});

/**
 * V0's file changes (OpenHands 0.53 `FileWriteAction`/`FileEditAction` and their observations, as
 * `oh_event` sends them), whole: each carries `paths`, the one file it changes. A failed write or edit
 * arrives as an `error` observation instead, so these always report a change.
 */
describe('mapUpstreamEvent: file changes', () => {
  const APP = '/workspace/app.py';
  const mapped = (
    payload: { id: number; message: string; cause?: number },
    phase: EventPhase,
    upstreamKind: string,
    fields: EventKindFields,
  ) => ({
    eventId: payload.id,
    cursor: v0Cursor(payload.id),
    timestamp: '2025-08-14T12:00:04.250000Z',
    source: 'agent',
    message: payload.message,
    cause: payload.cause ?? null,
    phase,
    upstreamKind,
    raw: payload,
    ...fields,
  });
  const at = { timestamp: '2025-08-14T12:00:04.250000', source: 'agent' };

  it.each([
    {
      name: 'a write action',
      payload: {
        id: 11,
        ...at,
        message: `Writing file: ${APP}`,
        action: 'write',
        args: { path: APP, content: "print('hi')\n", start: 0, end: -1, thought: '', security_risk: -1 },
      },
      expected: (p: { id: number; message: string }) =>
        mapped(p, 'ACTION', 'write', {
          kind: 'FILE_WRITE',
          path: APP,
          content: "print('hi')\n",
          paths: [APP],
        }),
    },
    {
      name: "a write's observation",
      payload: {
        id: 12,
        ...at,
        message: `I wrote to the file ${APP}.`,
        cause: 11,
        observation: 'write',
        content: "print('hi')\n",
        extras: { path: APP },
      },
      expected: (p: { id: number; message: string; cause?: number }) =>
        mapped(p, 'OBSERVATION', 'write', {
          kind: 'FILE_WRITE',
          path: APP,
          content: "print('hi')\n",
          paths: [APP],
        }),
    },
    {
      name: 'an edit action (str_replace_editor)',
      payload: {
        id: 13,
        ...at,
        message: `Editing file: ${APP}`,
        action: 'edit',
        args: {
          path: APP,
          command: 'str_replace',
          file_text: null,
          old_str: "print('hi')",
          new_str: "print('hello')",
          insert_line: null,
          content: '',
          start: 1,
          end: -1,
          thought: '',
          security_risk: -1,
          impl_source: 'oh_aci',
        },
      },
      expected: (p: { id: number; message: string }) =>
        mapped(p, 'ACTION', 'edit', {
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
      name: "an edit's observation, with its diff",
      payload: {
        id: 14,
        ...at,
        message: `I edited the file ${APP}.`,
        cause: 13,
        observation: 'edit',
        content: `The file ${APP} has been edited.`,
        extras: {
          path: APP,
          prev_exist: true,
          old_content: "print('hi')\n",
          new_content: "print('hello')\n",
          impl_source: 'oh_aci',
          diff: "--- a\n+++ b\n-print('hi')\n+print('hello')\n",
        },
      },
      expected: (p: { id: number; message: string; cause?: number }) =>
        mapped(p, 'OBSERVATION', 'edit', {
          kind: 'FILE_EDIT',
          path: APP,
          diff: "--- a\n+++ b\n-print('hi')\n+print('hello')\n",
          command: null,
          oldContent: "print('hi')\n",
          newContent: "print('hello')\n",
          paths: [APP],
        }),
    },
  ])('$name', ({ payload, expected }) => {
    const event = mapUpstreamEvent(payload, 'UTC');
    expect(event).toEqual(expected(payload));
    // The common fields, then the kind's, in that order (toEqual alone ignores the order).
    expect(Object.keys(event ?? {})).toEqual(Object.keys(expected(payload)));
  });
});
