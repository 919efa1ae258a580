/**
 * The scripted agent's answer to one user message, as SDK events: the shared script (agent-script.ts,
 * the command language both faces answer) translated step by step into what an agent server v1.43.1
 * conversation emits, plus a verb of V1's own (a run that fails):
 *
 *   run: <cmd>      ActionEvent (TerminalAction) + ObservationEvent (TerminalObservation, exit code)
 *   think: <text>   ActionEvent (ThinkAction) + ObservationEvent (ThinkObservation)
 *   title: <text>   the stored title changes (no push on V1 sockets) + an assistant MessageEvent
 *   error: <text>   AgentErrorEvent (the agent reports a tool error and stops)
 *   finish[: text]  ActionEvent (FinishAction) + ObservationEvent (FinishObservation)
 *   write:, edit:, delete:
 *                   a change of the sandbox's workspace (file-steps.ts): the file editor's `create` or
 *                   `str_replace`, or the terminal's `rm`, made when its observation's turn comes
 *   fail: <text>    ConversationErrorEvent, and the run ends `error` (as an LLM failure ends it)
 *   anything else   an assistant MessageEvent `You said: <content>`
 *
 * Events are built when the step runs (ids and timestamps are the moment of emission); a tool call's
 * observation that changes the workspace is built, and the change made, only when its turn comes, so
 * an action held for confirmation and then rejected changes nothing. The agent ends every other answer
 * `finished`, as the SDK's agent does once it replies without a tool call or finishes.
 */
import type { ExecutionStatusValue } from '../../contract/v1/events.ts';
import { agentScript, type ScriptStep } from '../agent-script.ts';
import {
  actionEvent,
  agentErrorEvent,
  conversationErrorEvent,
  messageEvent,
  observationEvent,
  text,
} from './event-factory.ts';
import { type AnswerPart, terminalEvents, v1FileSteps } from './file-steps.ts';

export type { AnswerPart } from './file-steps.ts';

/** One answer: its parts in order and the title it sets, if any. */
export interface V1Answer {
  parts: AnswerPart[];
  title: string | null;
  finalStatus: Extract<ExecutionStatusValue, 'finished' | 'error'>;
}

/** One script step as SDK events (a file step's observation deferred until its turn). */
function sdkEvents(step: Exclude<ScriptStep, { kind: 'title' }>, workspaceRoot: () => string): AnswerPart[] {
  switch (step.kind) {
    case 'run':
      return terminalEvents(step.command, () => ({ output: step.output, exitCode: step.exitCode }));
    case 'write':
    case 'create':
    case 'replace':
    case 'delete':
      return v1FileSteps(step, workspaceRoot);
    case 'think': {
      const { thought } = step;
      const action = actionEvent('think', { thought, kind: 'ThinkAction' }, { thought });
      const observation = observationEvent(action, {
        content: [text('Your thought has been logged.')],
        is_error: false,
        kind: 'ThinkObservation',
      });
      return [action, observation];
    }
    case 'error':
      return [agentErrorEvent('terminal', step.content)];
    case 'finish': {
      const message = step.thought;
      const action = actionEvent('finish', { message, kind: 'FinishAction' }, { message });
      return [
        action,
        observationEvent(action, { content: [text(message)], is_error: false, kind: 'FinishObservation' }),
      ];
    }
    case 'message':
      return [messageEvent('agent', [text(step.content)])];
  }
}

/**
 * What the agent answers to a user message with this content, as SDK events. `workspaceRoot` answers
 * the folder of the conversation's sandbox, asked only when a file step makes its change.
 */
export function v1Answer(content: string, workspaceRoot: () => string): V1Answer {
  const fail = /^fail:\s*(\S.*)$/is.exec(content.trim());
  if (fail?.[1]) {
    const parts = [conversationErrorEvent('LocalAgentError', fail[1].trim())];
    return { parts, title: null, finalStatus: 'error' };
  }
  const parts: AnswerPart[] = [];
  let title: string | null = null;
  for (const step of agentScript(content).steps) {
    if (step.kind === 'title') title = step.title;
    else parts.push(...sdkEvents(step, workspaceRoot));
  }
  return { parts, title, finalStatus: 'finished' };
}
