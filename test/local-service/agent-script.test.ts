/**
 * The scripted agent as pure functions: the shared script's neutral steps for each command of its
 * language (src/local-service/agent-script.ts), and the whole answer as V0's events
 * (src/local-service/v0/answer.ts), no service needed. test/local-service/runtime.test.ts runs it for
 * real; V1's events are checked through its agent servers (v1-agent-server.test.ts, v1-events.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { agentScript } from '../../src/local-service/agent-script.ts';
import { v0Answer } from '../../src/local-service/v0/answer.ts';

const message = (content: string) => ({
  kind: 'event',
  causedBy: 'message',
  event: {
    source: 'agent',
    message: content,
    action: 'message',
    args: { content, image_urls: [], file_urls: [], wait_for_response: true },
  },
});

describe('agentScript', () => {
  it('answers each verb with neutral steps, and finishes only on finish', () => {
    expect(agentScript('  hello  ')).toEqual({
      steps: [{ kind: 'message', content: 'You said:   hello  ' }],
      finished: false,
    });
    expect(agentScript('run: echo hi').steps).toEqual([
      { kind: 'run', command: 'echo hi', output: 'hi', exitCode: 0 },
    ]);
    expect(agentScript('Think: plan it').steps).toEqual([{ kind: 'think', thought: 'plan it' }]);
    expect(agentScript('title: New').steps).toEqual([
      { kind: 'title', title: 'New' },
      { kind: 'message', content: 'Title changed to: New' },
    ]);
    expect(agentScript('error: boom').steps).toEqual([{ kind: 'error', content: 'boom' }]);
    expect(agentScript('finish')).toEqual({ steps: [{ kind: 'finish', thought: '' }], finished: true });
  });
});

describe('v0Answer', () => {
  it('quotes anything that is not a command, untrimmed', () => {
    expect(v0Answer('  hello  ')).toEqual({
      steps: [message('You said:   hello  ')],
      finalState: 'awaiting_user_input',
    });
  });

  it('runs a command: the action, then its observation caused by the action', () => {
    const answer = v0Answer('run: exit 3');
    expect(answer.finalState).toBe('awaiting_user_input');
    expect(answer.steps).toEqual([
      {
        kind: 'event',
        causedBy: 'message',
        event: {
          source: 'agent',
          message: 'Running command: exit 3',
          action: 'run',
          args: {
            command: 'exit 3',
            is_input: false,
            thought: '',
            blocking: false,
            hidden: false,
            confirmation_state: 'confirmed',
            security_risk: -1,
          },
        },
      },
      {
        kind: 'event',
        causedBy: 'previous',
        event: {
          source: 'agent',
          message: 'Command `exit 3` executed with exit code 3.',
          observation: 'run',
          content: '',
          extras: { command: 'exit 3', metadata: { exit_code: 3, working_dir: '/workspace' }, hidden: false },
          success: false,
        },
      },
    ]);
  });

  it('simulates echo, true, false and unknown commands', () => {
    const observed = (command: string) => {
      const step = v0Answer(`run: ${command}`).steps[1];
      const event = step?.kind === 'event' ? (step.event as { content: string; success: boolean }) : null;
      return [event?.content, event?.success];
    };
    expect(observed('echo hi there')).toEqual(['hi there', true]);
    expect(observed('true')).toEqual(['', true]);
    expect(observed('false')).toEqual(['', false]);
    expect(observed('ls -la')).toEqual(['bash: ls: command not found', false]);
  });

  it('logs a thought as a think action and its observation', () => {
    expect(v0Answer('THINK: plan it').steps).toEqual([
      {
        kind: 'event',
        causedBy: 'message',
        event: { source: 'agent', message: 'plan it', action: 'think', args: { thought: 'plan it' } },
      },
      {
        kind: 'event',
        causedBy: 'previous',
        event: {
          source: 'agent',
          message: 'Your thought has been logged.',
          observation: 'think',
          content: 'Your thought has been logged.',
          extras: {},
        },
      },
    ]);
  });

  it('changes the title (cut to 200 characters) and confirms it', () => {
    const long = 'x'.repeat(250);
    expect(v0Answer(`title: ${long}`)).toEqual({
      steps: [{ kind: 'title', title: 'x'.repeat(200) }, message(`Title changed to: ${'x'.repeat(200)}`)],
      finalState: 'awaiting_user_input',
    });
  });

  it('reports an error observation, and finishes with the finished state', () => {
    expect(v0Answer('error: boom').steps).toEqual([
      {
        kind: 'event',
        causedBy: 'message',
        event: {
          source: 'agent',
          message: 'boom',
          observation: 'error',
          content: 'boom',
          extras: { error_id: '' },
        },
      },
    ]);
    expect(v0Answer('finish: done')).toEqual({
      steps: [
        {
          kind: 'event',
          causedBy: 'message',
          event: {
            source: 'agent',
            message: 'done',
            action: 'finish',
            args: { final_thought: 'done', outputs: {} },
          },
        },
      ],
      finalState: 'finished',
    });
  });

  it('treats a command verb without its text as an ordinary message', () => {
    expect(v0Answer('run:').steps).toEqual([message('You said: run:')]);
    expect(v0Answer('think:   ').steps).toEqual([message('You said: think:   ')]);
  });
});
