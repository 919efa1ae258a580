/**
 * The scripted agent of the local service, as a pure function: what it answers to one user message, as
 * the events to store in order (their ids and timestamps come later, from the store) plus the agent
 * state it ends in. No timers, store or I/O: v0/agent.ts runs the steps.
 *
 * The little command language of the agent (a user message's content, leading/trailing space ignored):
 *
 *   run: <cmd>      a `run` action, then a `run` observation with `extras.metadata.exit_code` and
 *                   top-level `success`. `echo <text>` prints <text> (exit 0); `exit <n>` prints nothing
 *                   and exits with <n>; `true` exits 0 and `false` exits 1; anything else prints
 *                   `bash: <cmd>: command not found` and exits 127.
 *   think: <text>   a `think` action (args.thought) and its `think` observation.
 *   title: <text>   the conversation's stored title becomes <text> (at most 200 characters), a title-change
 *                   status update is sent live, and the agent confirms with a `message` action.
 *   error: <text>   an `error` observation whose content is <text>.
 *   finish          a `finish` action (args.final_thought = the text after `finish:` if any) and the agent
 *                   state `finished` instead of `awaiting_user_input`.
 *   anything else   a `message` action from the agent quoting it: `You said: <content>`.
 *
 * Every answer carries `cause` = the id of the user message it answers, is preceded by an
 * agent_state_changed `running` observation and followed by `awaiting_user_input` (or `finished`).
 */
import type {
  ActionEventRecord,
  AgentStateValue,
  ConversationEventRecord,
  ObservationEventRecord,
} from '../contract/v0/records.ts';
import { MAX_TITLE_LENGTH } from './v0/validation/rename-body.ts';

/** One step of an answer, in order. */
type ScriptStep =
  /**
   * An event to store. Its `cause` is the user message (`message`) or the event stored just before
   * it (`previous`: an observation answers its action); the id is only known once stored.
   */
  | { kind: 'event'; event: ConversationEventRecord; causedBy: 'message' | 'previous' }
  /** The conversation's title changes (stored, and a title status update goes out live). */
  | { kind: 'title'; title: string };

/** The agent's whole answer to one message. */
export interface AgentAnswer {
  steps: ScriptStep[];
  /** The agent state after the answer (`running` precedes it, see v0/agent.ts). */
  finalState: Extract<AgentStateValue, 'awaiting_user_input' | 'finished'>;
}

/** Deterministic output of `run: <cmd>`. */
function simulateCommand(command: string): { output: string; exitCode: number } {
  const echo = /^echo(?:\s+(.*))?$/s.exec(command);
  if (echo) return { output: echo[1] ?? '', exitCode: 0 };
  const exit = /^exit\s+(\d{1,3})$/.exec(command);
  if (exit) return { output: '', exitCode: Number(exit[1]) % 256 };
  if (command === 'true') return { output: '', exitCode: 0 };
  if (command === 'false') return { output: '', exitCode: 1 };
  const name = command.split(/\s+/)[0] ?? command;
  return { output: `bash: ${name}: command not found`, exitCode: 127 };
}

/** Omit over each member of a union (a plain Omit would merge the members). */
type WithoutSource<T> = T extends unknown ? Omit<T, 'source'> : never;

/** An event from the agent, caused by the user message or by the event stored just before it. */
function agentEvent(
  causedBy: 'message' | 'previous',
  event: WithoutSource<ActionEventRecord | ObservationEventRecord>,
): ScriptStep {
  return { kind: 'event', causedBy, event: { source: 'agent', ...event } as ConversationEventRecord };
}

function agentMessage(content: string): ScriptStep {
  return agentEvent('message', {
    message: content,
    action: 'message',
    args: { content, image_urls: [], file_urls: [], wait_for_response: true },
  });
}

/** What the agent answers to a user message with this content (the command language above). */
export function agentScript(content: string): AgentAnswer {
  const text = content.trim();
  const command = /^(run|think|title|error|finish)(?::\s*(.*))?$/is.exec(text);
  const verb = command?.[1]?.toLowerCase();
  const rest = command?.[2]?.trim() ?? '';
  const answered = (...steps: ScriptStep[]): AgentAnswer => ({ steps, finalState: 'awaiting_user_input' });
  if (verb === 'run' && rest !== '') {
    const { output, exitCode } = simulateCommand(rest);
    return answered(
      agentEvent('message', {
        message: `Running command: ${rest}`,
        action: 'run',
        args: {
          command: rest,
          is_input: false,
          thought: '',
          blocking: false,
          hidden: false,
          confirmation_state: 'confirmed',
          security_risk: -1,
        },
      }),
      agentEvent('previous', {
        message: `Command \`${rest}\` executed with exit code ${exitCode}.`,
        observation: 'run',
        content: output,
        extras: {
          command: rest,
          metadata: { exit_code: exitCode, working_dir: '/workspace' },
          hidden: false,
        },
        success: exitCode === 0,
      }),
    );
  }
  if (verb === 'think' && rest !== '') {
    const logged = 'Your thought has been logged.';
    return answered(
      agentEvent('message', { message: rest, action: 'think', args: { thought: rest } }),
      agentEvent('previous', { message: logged, observation: 'think', content: logged, extras: {} }),
    );
  }
  if (verb === 'title' && rest !== '') {
    const title = rest.slice(0, MAX_TITLE_LENGTH);
    return answered({ kind: 'title', title }, agentMessage(`Title changed to: ${title}`));
  }
  if (verb === 'error' && rest !== '') {
    return answered(
      agentEvent('message', { message: rest, observation: 'error', content: rest, extras: { error_id: '' } }),
    );
  }
  if (verb === 'finish') {
    return {
      steps: [
        agentEvent('message', {
          message: rest,
          action: 'finish',
          args: { final_thought: rest, outputs: {} },
        }),
      ],
      finalState: 'finished',
    };
  }
  return answered(agentMessage(`You said: ${content}`));
}
