/**
 * The scripted agent's answer to one user message as V0's events: the shared script's steps
 * (agent-script.ts) as the actions and observations an OpenHands 0.53 agent stores, in order:
 *
 *   run      a `run` action, then a `run` observation with `extras.metadata.exit_code` and top-level
 *            `success`
 *   think    a `think` action (args.thought) and its `think` observation
 *   title    the stored title changes (and a title-change status update goes out live, agent.ts)
 *   message  a `message` action from the agent
 *   error    an `error` observation whose content is the text
 *   finish   a `finish` action (args.final_thought), and the agent state `finished`
 *   write, create, replace, delete
 *            a change of the workspace, made when the step runs (file-steps.ts): a `write` action
 *            and observation, an `edit` action and observation (`create` / `str_replace`), or the
 *            `run` of `rm`
 *
 * Every event carries `cause`: the user message it answers, or (an observation) the action stored just
 * before it; ids and timestamps come later, from the store. The answer ends in the agent state
 * `awaiting_user_input`, or `finished`; agent.ts sends `running` before it.
 */
import type {
  ActionEventRecord,
  AgentStateValue,
  ConversationEventRecord,
  ObservationEventRecord,
} from '../../contract/v0/records.ts';
import { agentScript, type FileStep, type ScriptStep } from '../agent-script.ts';

/** One step of a V0 answer, in order. */
export type V0Step =
  /**
   * An event to store. Its `cause` is the user message (`message`) or the event stored just before
   * it (`previous`: an observation answers its action); the id is only known once stored.
   */
  | { kind: 'event'; event: ConversationEventRecord; causedBy: 'message' | 'previous' }
  /** The conversation's title changes (stored, and a title status update goes out live). */
  | { kind: 'title'; title: string }
  /** A change of the workspace: made when the step runs, its events follow (file-steps.ts). */
  | { kind: 'file'; step: FileStep };

/** The agent's whole answer to one message, as V0's events. */
export interface V0Answer {
  steps: V0Step[];
  /** The agent state after the answer (`running` precedes it, see agent.ts). */
  finalState: Extract<AgentStateValue, 'awaiting_user_input' | 'finished'>;
}

/** Omit over each member of a union (a plain Omit would merge the members). */
type WithoutSource<T> = T extends unknown ? Omit<T, 'source'> : never;

/** An event from the agent, caused by the user message or by the event stored just before it. */
export function agentEvent(
  causedBy: 'message' | 'previous',
  event: WithoutSource<ActionEventRecord | ObservationEventRecord>,
): V0Step {
  return { kind: 'event', causedBy, event: { source: 'agent', ...event } as ConversationEventRecord };
}

/** A command the agent ran: the `run` action and its observation (exit code, output). */
export function runSteps(command: string, output: string, exitCode: number): V0Step[] {
  return [
    agentEvent('message', {
      message: `Running command: ${command}`,
      action: 'run',
      args: {
        command,
        is_input: false,
        thought: '',
        blocking: false,
        hidden: false,
        confirmation_state: 'confirmed',
        security_risk: -1,
      },
    }),
    agentEvent('previous', {
      message: `Command \`${command}\` executed with exit code ${exitCode}.`,
      observation: 'run',
      content: output,
      extras: { command, metadata: { exit_code: exitCode, working_dir: '/workspace' }, hidden: false },
      success: exitCode === 0,
    }),
  ];
}

/** One script step as V0's events. */
function v0Steps(step: ScriptStep): V0Step[] {
  switch (step.kind) {
    case 'run':
      return runSteps(step.command, step.output, step.exitCode);
    case 'write':
    case 'create':
    case 'replace':
    case 'delete':
      return [{ kind: 'file', step }];
    case 'think': {
      const logged = 'Your thought has been logged.';
      return [
        agentEvent('message', { message: step.thought, action: 'think', args: { thought: step.thought } }),
        agentEvent('previous', { message: logged, observation: 'think', content: logged, extras: {} }),
      ];
    }
    case 'title':
      return [{ kind: 'title', title: step.title }];
    case 'message':
      return [
        agentEvent('message', {
          message: step.content,
          action: 'message',
          args: { content: step.content, image_urls: [], file_urls: [], wait_for_response: true },
        }),
      ];
    case 'error':
      return [
        agentEvent('message', {
          message: step.content,
          observation: 'error',
          content: step.content,
          extras: { error_id: '' },
        }),
      ];
    case 'finish':
      return [
        agentEvent('message', {
          message: step.thought,
          action: 'finish',
          args: { final_thought: step.thought, outputs: {} },
        }),
      ];
  }
}

/** What the agent answers to a user message with this content, as V0's events. */
export function v0Answer(content: string): V0Answer {
  const script = agentScript(content);
  return {
    steps: script.steps.flatMap(v0Steps),
    finalState: script.finished ? 'finished' : 'awaiting_user_input',
  };
}
