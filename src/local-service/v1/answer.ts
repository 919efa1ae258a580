/**
 * The scripted agent's answer to one user message, as SDK events: the shared script (agent-script.ts,
 * the command language both faces answer) translated step by step into what an agent server v1.43.1
 * conversation emits, plus two verbs of V1's own (file edits, and a run that fails):
 *
 *   run: <cmd>      ActionEvent (TerminalAction) + ObservationEvent (TerminalObservation, exit code)
 *   think: <text>   ActionEvent (ThinkAction) + ObservationEvent (ThinkObservation)
 *   title: <text>   the stored title changes (no push on V1 sockets) + an assistant MessageEvent
 *   error: <text>   AgentErrorEvent (the agent reports a tool error and stops)
 *   finish[: text]  ActionEvent (FinishAction) + ObservationEvent (FinishObservation)
 *   edit: <path>    ActionEvent (FileEditorAction create) + ObservationEvent (FileEditorObservation)
 *   fail: <text>    ConversationErrorEvent, and the run ends `error` (as an LLM failure ends it)
 *   anything else   an assistant MessageEvent `You said: <content>`
 *
 * Events are built when the step runs (ids and timestamps are the moment of emission). The agent ends
 * every other answer `finished`, as the SDK's agent does once it replies without a tool call or finishes.
 */
import type { ExecutionStatusValue, SdkEventRecord } from '../../contract/v1/events.ts';
import { agentScript, type ScriptStep } from '../agent-script.ts';
import {
  actionEvent,
  agentErrorEvent,
  conversationErrorEvent,
  messageEvent,
  observationEvent,
  text,
} from './event-factory.ts';

/** The working directory the scripted sandbox reports. */
export const WORKING_DIR = '/workspace/project';

/** One answer: its events in order and the title it sets, if any. */
export interface V1Answer {
  events: SdkEventRecord[];
  title: string | null;
  finalStatus: Extract<ExecutionStatusValue, 'finished' | 'error'>;
}

function editAnswer(path: string): SdkEventRecord[] {
  const fileText = `# created by the scripted agent\n`;
  const action = actionEvent(
    'file_editor',
    { command: 'create', path, file_text: fileText, kind: 'FileEditorAction' },
    { command: 'create', path, file_text: fileText },
  );
  const observation = observationEvent(action, {
    content: [text(`File created successfully at: ${path}`)],
    is_error: false,
    command: 'create',
    path,
    prev_exist: false,
    new_content: fileText,
    kind: 'FileEditorObservation',
  });
  return [action, observation];
}

/** One script step as SDK events. */
function sdkEvents(step: Exclude<ScriptStep, { kind: 'title' }>): SdkEventRecord[] {
  switch (step.kind) {
    case 'run': {
      const { command, exitCode } = step;
      const action = actionEvent(
        'terminal',
        { command, is_input: false, reset: false, kind: 'TerminalAction' },
        { command },
      );
      const observation = observationEvent(action, {
        content: [text(step.output)],
        is_error: false,
        command,
        exit_code: exitCode,
        timeout: false,
        metadata: {
          exit_code: exitCode,
          pid: -1,
          username: 'openhands',
          hostname: 'sandbox',
          working_dir: WORKING_DIR,
          prefix: '',
          suffix: '',
        },
        kind: 'TerminalObservation',
      });
      return [action, observation];
    }
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

/** What the agent answers to a user message with this content, as SDK events. */
export function v1Answer(content: string): V1Answer {
  const edit = /^edit:\s*(\S.*)$/is.exec(content.trim());
  if (edit?.[1]) {
    const path = edit[1].trim().startsWith('/') ? edit[1].trim() : `${WORKING_DIR}/${edit[1].trim()}`;
    return { events: editAnswer(path), title: null, finalStatus: 'finished' };
  }
  const fail = /^fail:\s*(\S.*)$/is.exec(content.trim());
  if (fail?.[1]) {
    const events = [conversationErrorEvent('LocalAgentError', fail[1].trim())];
    return { events, title: null, finalStatus: 'error' };
  }
  const events: SdkEventRecord[] = [];
  let title: string | null = null;
  for (const step of agentScript(content).steps) {
    if (step.kind === 'title') title = step.title;
    else events.push(...sdkEvents(step));
  }
  return { events, title, finalStatus: 'finished' };
}
