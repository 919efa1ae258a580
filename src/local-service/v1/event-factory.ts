/**
 * Builds SDK events the way agent server v1.43.1 serializes them: a dashed uuid4 `id`, a naive
 * local-time `timestamp` (`datetime.now().isoformat()`: microseconds omitted when zero), null fields
 * omitted, and `kind` last (a computed field, dumped after the declared ones). Every V1 event the local
 * service emits is made here, so those three rules live in one place.
 */
import { randomUUID } from 'node:crypto';
import type {
  ActionRecord,
  ContentRecord,
  ErrorClassificationRecord,
  ObservationRecord,
  SdkEventRecord,
  TextContentRecord,
} from '../../contract/v1/events.ts';

let lastMicros = 0;

/**
 * Now, as Python's `datetime.now().isoformat()` prints it in the server's local zone. Microseconds come
 * from the high-resolution clock and always move forward (no two events share one), so timestamps
 * order like the log does (the socket's `after_timestamp` compares them as strings).
 */
function sdkTimestamp(): string {
  const micros = Math.max(Math.floor((performance.timeOrigin + performance.now()) * 1000), lastMicros + 1);
  lastMicros = micros;
  return naiveLocalIso(micros);
}

/**
 * Now in UTC with microseconds and `Z`, as pydantic serializes the app server's aware datetimes
 * (`created_at`, `updated_at`). Always six digits, so stored values order as text.
 */
export function utcTimestamp(): string {
  const micros = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  return `${iso.slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
}

/** An instant (microseconds since the epoch) as Python's naive local `isoformat()`. */
export function naiveLocalIso(micros: number): string {
  const date = new Date(Math.floor(micros / 1000));
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  const fraction = micros % 1_000_000;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    (fraction === 0 ? '' : `.${pad(fraction, 6)}`)
  );
}

/** `json.dumps` with its default separators (`, ` and `: `), as tool-call arguments are written. */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

function llmResponseId(): string {
  return `chatcmpl-${randomUUID().replaceAll('-', '').slice(0, 20)}`;
}

/** `TextContent` as dumped (cache_prompt first, as the model declares it). */
export function text(value: string): TextContentRecord {
  return { cache_prompt: false, type: 'text', text: value };
}

/** Drops undefined and null fields (exclude_none) and puts `kind` last. */
function finish<T extends { kind: string }>(fields: T): T {
  const { kind, ...rest } = fields;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest))
    if (value !== undefined && value !== null) out[key] = value;
  out.kind = kind;
  return out as T;
}

type Source = SdkEventRecord['source'];
/** An event's own fields: everything but the id and timestamp this module assigns. */
type EventFields = SdkEventRecord extends infer E
  ? E extends unknown
    ? Omit<E, 'id' | 'timestamp'>
    : never
  : never;

/** An event with a fresh id and timestamp; nested objects are finished by their builders. */
export function sdkEvent<F extends EventFields>(fields: F): Extract<SdkEventRecord, { kind: F['kind'] }> {
  return finish({ id: randomUUID(), timestamp: sdkTimestamp(), ...fields }) as unknown as Extract<
    SdkEventRecord,
    { kind: F['kind'] }
  >;
}

/** A chat message: from the user (role user) or the agent (role assistant). */
export function messageEvent(source: Source, content: ContentRecord[]) {
  return sdkEvent({
    source,
    llm_message: { role: source === 'user' ? 'user' : 'assistant', content, thinking_blocks: [] },
    // Only what an LLM wrote has a response id.
    ...(source === 'agent' ? { llm_response_id: llmResponseId() } : {}),
    activated_skills: [],
    extended_content: [],
    kind: 'MessageEvent',
  });
}

/** A change of one conversation state field (`execution_status`, ...). */
export function stateUpdate(key: string, value: unknown) {
  return sdkEvent({ source: 'environment', key, value, kind: 'ConversationStateUpdateEvent' });
}

/** An agent's tool call: the ActionEvent and the ids its observation needs. */
export function actionEvent(
  toolName: string,
  action: ActionRecord,
  args: Record<string, unknown>,
  thought = '',
) {
  const toolCallId = `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
  return sdkEvent({
    source: 'agent',
    thought: thought === '' ? [] : [text(thought)],
    thinking_blocks: [],
    action: finish(action),
    tool_name: toolName,
    tool_call_id: toolCallId,
    tool_call: { id: toolCallId, name: toolName, arguments: pythonJson(args), origin: 'completion' },
    llm_response_id: llmResponseId(),
    security_risk: toolName === 'terminal' ? 'LOW' : 'UNKNOWN',
    kind: 'ActionEvent',
  });
}

/** The observation answering `action`. */
export function observationEvent(
  action: { id: string; tool_name: string; tool_call_id: string },
  observation: ObservationRecord,
) {
  return sdkEvent({
    source: 'environment',
    tool_name: action.tool_name,
    tool_call_id: action.tool_call_id,
    observation: finish(observation),
    action_id: action.id,
    extended_content: [],
    kind: 'ObservationEvent',
  });
}

/** A tool error the agent reports and then goes on (v1.40.0+ classification). */
export function agentErrorEvent(toolName: string, error: string) {
  const classification: ErrorClassificationRecord = {
    kind: 'agent_action',
    retryable: true,
    user_action: 'retry',
  };
  return sdkEvent({
    source: 'agent',
    tool_name: toolName,
    tool_call_id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    error,
    classification,
    kind: 'AgentErrorEvent',
  });
}

/** The answer to a rejected action (`respond_to_confirmation` with `accept: false`). */
export function userReject(action: { id: string; tool_name: string; tool_call_id: string }, reason: string) {
  return sdkEvent({
    source: 'environment',
    tool_name: action.tool_name,
    tool_call_id: action.tool_call_id,
    action_id: action.id,
    rejection_reason: reason,
    rejection_source: 'user',
    kind: 'UserRejectObservation',
  });
}

/** An error that ends the run (the conversation's status becomes `error`). */
export function conversationErrorEvent(code: string, detail: string) {
  const classification: ErrorClassificationRecord = {
    kind: 'unknown',
    retryable: false,
    user_action: 'none',
  };
  return sdkEvent({ source: 'environment', code, detail, classification, kind: 'ConversationErrorEvent' });
}

/** What the agent server sends a socket whose frame it could not use (v1.16.0+); never stored. */
export function serverErrorEvent(code: string, detail: string) {
  return sdkEvent({ source: 'environment', code, detail, kind: 'ServerErrorEvent' });
}

/** The system prompt, the first event of every conversation. */
export function systemPromptEvent() {
  return sdkEvent({
    source: 'agent',
    system_prompt: text(
      'You are OpenHands agent, a helpful AI assistant (the scripted agent of the local service: no LLM).',
    ),
    tools: [{ name: 'terminal' }, { name: 'file_editor' }, { name: 'think' }, { name: 'finish' }],
    kind: 'SystemPromptEvent',
  });
}
