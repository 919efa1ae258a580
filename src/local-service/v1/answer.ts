/**
 * The scripted agent's answer to one user message, as SDK events: the V0 script (agent-script.ts, the
 * same command language) translated step by step into what an agent server v1.43.1 conversation
 * emits, plus one verb V1 adds because its event model has file edits:
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
import type { ActionEventRecord, ExecutionStatusValue, SdkEventRecord } from '../../contract/v1/events.ts';
import { agentScript } from '../agent-script.ts';
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

/** Translates the shared script's V0 steps into SDK events. */
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
  let lastAction: ActionEventRecord | undefined;
  for (const step of agentScript(content).steps) {
    if (step.kind === 'title') {
      title = step.title;
      continue;
    }
    const record = step.event as unknown as Record<string, unknown> & { args?: Record<string, unknown> };
    const args = record.args ?? {};
    if (record.action === 'run') {
      const command = String(args.command);
      lastAction = actionEvent(
        'terminal',
        { command, is_input: false, reset: false, kind: 'TerminalAction' },
        { command },
      );
      events.push(lastAction);
    } else if (record.observation === 'run' && lastAction) {
      const extras = record.extras as { metadata: { exit_code: number } };
      const exitCode = extras.metadata.exit_code;
      events.push(
        observationEvent(lastAction, {
          content: [text(String(record.content))],
          is_error: false,
          command: lastAction.action?.kind === 'TerminalAction' ? lastAction.action.command : '',
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
        }),
      );
    } else if (record.action === 'think') {
      const thought = String(args.thought);
      lastAction = actionEvent('think', { thought, kind: 'ThinkAction' }, { thought });
      events.push(lastAction);
    } else if (record.observation === 'think' && lastAction) {
      events.push(
        observationEvent(lastAction, {
          content: [text(String(record.content))],
          is_error: false,
          kind: 'ThinkObservation',
        }),
      );
    } else if (record.observation === 'error') {
      events.push(agentErrorEvent('terminal', String(record.content)));
    } else if (record.action === 'finish') {
      const message = String(args.final_thought ?? '');
      const finishAction = actionEvent('finish', { message, kind: 'FinishAction' }, { message });
      events.push(
        finishAction,
        observationEvent(finishAction, {
          content: [text(message)],
          is_error: false,
          kind: 'FinishObservation',
        }),
      );
    } else if (record.action === 'message') {
      events.push(messageEvent('agent', [text(String(args.content))]));
    }
  }
  return { events, title, finalStatus: 'finished' };
}
