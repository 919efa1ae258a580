/**
 * Wire shapes of the OpenHands SDK events (the V1 API), as agent server v1.43.1 sends them on its
 * WebSocket and in its event search: `model_dump(mode="json", exclude_none=True)`, so null fields are
 * absent, and `kind` (the class name, a pydantic computed field) comes last. From
 * OpenHands/software-agent-sdk v1.43.1 `openhands-sdk/openhands/sdk/event/` (docs/upstream-facts.md,
 * "V1: the SDK event model"). Readers must pass unknown kinds and fields through.
 */

/** Where an event comes from (`hook` from SDK v1.13.0). */
export type EventSourceValue = 'agent' | 'user' | 'environment' | 'hook';

/** `TextContent`. */
export interface TextContentRecord {
  cache_prompt: boolean;
  type: 'text';
  text: string;
}

/** `ImageContent`. */
export interface ImageContentRecord {
  cache_prompt: boolean;
  type: 'image';
  image_urls: string[];
}

export type ContentRecord = TextContentRecord | ImageContentRecord;

/** The LLM `Message` inside a MessageEvent, and what a client sends to run the agent. */
export interface MessageRecord {
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: ContentRecord[];
  thinking_blocks?: unknown[];
  reasoning_content?: string;
  tool_calls?: unknown[];
  tool_call_id?: string;
  name?: string;
}

/** Fields every event has. */
interface EventBaseRecord {
  /** `str(uuid4())`: a dashed UUID. */
  id: string;
  /** `datetime.now().isoformat()`: server local time, no zone, microseconds omitted when zero. */
  timestamp: string;
  source: EventSourceValue;
}

export interface MessageEventRecord extends EventBaseRecord {
  llm_message: MessageRecord;
  llm_response_id?: string;
  activated_skills: string[];
  extended_content: ContentRecord[];
  sender?: string;
  kind: 'MessageEvent';
}

/** `tool_call` of an ActionEvent; `arguments` is a JSON string. */
export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: string;
  origin: 'completion' | 'responses';
}

export type SecurityRiskValue = 'UNKNOWN' | 'LOW' | 'MEDIUM' | 'HIGH';

export interface TerminalActionRecord {
  command: string;
  is_input: boolean;
  timeout?: number;
  reset: boolean;
  kind: 'TerminalAction';
}

export interface FileEditorActionRecord {
  command: 'view' | 'create' | 'str_replace' | 'insert' | 'undo_edit';
  path: string;
  file_text?: string;
  old_str?: string;
  new_str?: string;
  insert_line?: number;
  view_range?: number[];
  kind: 'FileEditorAction';
}

export interface ThinkActionRecord {
  thought: string;
  kind: 'ThinkAction';
}

export interface FinishActionRecord {
  message: string;
  kind: 'FinishAction';
}

/**
 * The planning agent's editor (`planning_file_editor`): FileEditorAction's fields, editing only its
 * PLAN.md. openhands-tools/openhands/tools/planning_file_editor/definition.py@v1.43.1.
 */
export interface PlanningFileEditorActionRecord extends Omit<FileEditorActionRecord, 'kind'> {
  kind: 'PlanningFileEditorAction';
}

/**
 * `write_file` (a Gemini-style tool): the whole file, created or replaced. `file_path` as the model
 * wrote it (absolute, or relative to the working directory).
 * openhands-tools/openhands/tools/gemini/write_file/definition.py@v1.43.1.
 */
export interface WriteFileActionRecord {
  file_path: string;
  content: string;
  kind: 'WriteFileAction';
}

/**
 * `edit` (Gemini-style): replace `old_string` by `new_string` (an empty `old_string` creates the file).
 * openhands-tools/openhands/tools/gemini/edit/definition.py@v1.43.1.
 */
export interface EditActionRecord {
  file_path: string;
  old_string: string;
  new_string: string;
  /** Default 1. */
  expected_replacements: number;
  kind: 'EditAction';
}

/**
 * `apply_patch`: OpenAI's patch format, `*** Begin Patch` ... `*** End Patch`, naming each file on an
 * `*** Add File: `, `*** Delete File: ` or `*** Update File: ` line (an update may add `*** Move to: `),
 * relative to the working directory. openhands-tools/openhands/tools/apply_patch/definition.py and
 * core.py@v1.43.1.
 */
export interface ApplyPatchActionRecord {
  patch: string;
  kind: 'ApplyPatchAction';
}

/** The actions of the tools that change files by name, other than `file_editor`. */
export type FileChangeActionRecord =
  | PlanningFileEditorActionRecord
  | WriteFileActionRecord
  | EditActionRecord
  | ApplyPatchActionRecord;

/** Actions the local agent emits; real servers have many more (browser, grep, MCP, ...). */
export type ActionRecord =
  | TerminalActionRecord
  | FileEditorActionRecord
  | ThinkActionRecord
  | FinishActionRecord;

export interface ActionEventRecord extends EventBaseRecord {
  thought: TextContentRecord[];
  thinking_blocks: unknown[];
  reasoning_content?: string;
  /** Absent when the tool call could not be parsed. */
  action?: ActionRecord;
  tool_name: string;
  tool_call_id: string;
  tool_call: ToolCallRecord;
  llm_response_id: string;
  security_risk: SecurityRiskValue;
  summary?: string;
  kind: 'ActionEvent';
}

/** `metadata` of a TerminalObservation. */
export interface TerminalMetadataRecord {
  exit_code: number;
  pid: number;
  username?: string;
  hostname?: string;
  working_dir?: string;
  py_interpreter_path?: string;
  prefix: string;
  suffix: string;
}

interface ObservationBaseRecord {
  content: ContentRecord[];
  is_error: boolean;
}

export interface TerminalObservationRecord extends ObservationBaseRecord {
  command: string;
  /** -1: still running after the soft timeout. */
  exit_code?: number;
  timeout: boolean;
  metadata: TerminalMetadataRecord;
  full_output_save_dir?: string;
  kind: 'TerminalObservation';
}

export interface FileEditorObservationRecord extends ObservationBaseRecord {
  command: FileEditorActionRecord['command'];
  path?: string;
  prev_exist: boolean;
  old_content?: string;
  new_content?: string;
  kind: 'FileEditorObservation';
}

export interface ThinkObservationRecord extends ObservationBaseRecord {
  kind: 'ThinkObservation';
}

export interface FinishObservationRecord extends ObservationBaseRecord {
  kind: 'FinishObservation';
}

/** PlanningFileEditorObservation: FileEditorObservation's fields, without the contents. */
export interface PlanningFileEditorObservationRecord extends ObservationBaseRecord {
  command: FileEditorActionRecord['command'];
  path?: string;
  prev_exist: boolean;
  kind: 'PlanningFileEditorObservation';
}

/**
 * What `write_file` reports; `file_path` is the resolved absolute path, absent on most errors.
 * openhands-tools/openhands/tools/gemini/write_file/definition.py@v1.43.1.
 */
export interface WriteFileObservationRecord extends ObservationBaseRecord {
  file_path?: string;
  is_new_file: boolean;
  /** Absent for a new file. */
  old_content?: string;
  new_content?: string;
  kind: 'WriteFileObservation';
}

/**
 * What `edit` reports; an error (string not found, count mismatch, no change) keeps `file_path` with
 * `is_error: true` and changed nothing. openhands-tools/openhands/tools/gemini/edit/definition.py@v1.43.1.
 */
export interface EditObservationRecord extends ObservationBaseRecord {
  file_path?: string;
  is_new_file: boolean;
  replacements_made: number;
  old_content?: string;
  new_content?: string;
  kind: 'EditObservation';
}

/** One file's change in an applied patch (`FileChange`, apply_patch/core.py@v1.43.1). */
export interface PatchFileChangeRecord {
  type: 'add' | 'delete' | 'update';
  old_content?: string;
  new_content?: string;
  /** An update that also renamed the file: its new path. */
  move_path?: string;
}

/**
 * What `apply_patch` reports: `commit.changes` maps each path the patch named to its change; an error
 * has no commit. openhands-tools/openhands/tools/apply_patch/definition.py@v1.43.1.
 */
export interface ApplyPatchObservationRecord extends ObservationBaseRecord {
  /** `"Done!"` on success. */
  message: string;
  fuzz: number;
  commit?: { changes: Record<string, PatchFileChangeRecord> };
  kind: 'ApplyPatchObservation';
}

/** The observations of the tools in {@link FileChangeActionRecord}. */
export type FileChangeObservationRecord =
  | PlanningFileEditorObservationRecord
  | WriteFileObservationRecord
  | EditObservationRecord
  | ApplyPatchObservationRecord;

export type ObservationRecord =
  | TerminalObservationRecord
  | FileEditorObservationRecord
  | ThinkObservationRecord
  | FinishObservationRecord;

export interface ObservationEventRecord extends EventBaseRecord {
  tool_name: string;
  tool_call_id: string;
  observation: ObservationRecord;
  /** The id of the ActionEvent this observes. */
  action_id: string;
  extended_content: ContentRecord[];
  kind: 'ObservationEvent';
}

export interface UserRejectObservationRecord extends EventBaseRecord {
  tool_name: string;
  tool_call_id: string;
  action_id: string;
  rejection_reason: string;
  rejection_source?: 'user' | 'hook';
  kind: 'UserRejectObservation';
}

/** `classification` of error events (v1.40.0+); its `kind` is a category, not a class name. */
export interface ErrorClassificationRecord {
  kind: 'auth' | 'quota' | 'rate_limit' | 'config' | 'transient' | 'agent_action' | 'internal' | 'unknown';
  retryable: boolean;
  user_action: 'none' | 'retry' | 'settings';
  error_id?: string;
}

export interface AgentErrorEventRecord extends EventBaseRecord {
  tool_name: string;
  tool_call_id: string;
  error: string;
  classification?: ErrorClassificationRecord;
  kind: 'AgentErrorEvent';
}

export interface ConversationErrorEventRecord extends EventBaseRecord {
  code: string;
  detail: string;
  classification?: ErrorClassificationRecord;
  kind: 'ConversationErrorEvent';
}

/** Sent by the agent server only, e.g. for a bad WebSocket frame (v1.16.0+). */
export interface ServerErrorEventRecord extends EventBaseRecord {
  code: string;
  detail: string;
  kind: 'ServerErrorEvent';
}

/** Execution statuses of a conversation (`deleting` from SDK v1.6.0). */
export const EXECUTION_STATUSES = [
  'idle',
  'running',
  'paused',
  'waiting_for_confirmation',
  'finished',
  'error',
  'stuck',
  'deleting',
] as const;
export type ExecutionStatusValue = (typeof EXECUTION_STATUSES)[number];

/**
 * A change of one ConversationState field (`key`, its new JSON `value`), or `key:"full_state"` with the
 * whole state, sent first on each WebSocket connect and never stored.
 */
export interface ConversationStateUpdateEventRecord extends EventBaseRecord {
  key: string;
  value: unknown;
  kind: 'ConversationStateUpdateEvent';
}

export interface PauseEventRecord extends EventBaseRecord {
  kind: 'PauseEvent';
}

/** `POST .../interrupt` (v1.23.0+): the in-flight step is cancelled. */
export interface InterruptEventRecord extends EventBaseRecord {
  kind: 'InterruptEvent';
}

export interface SystemPromptEventRecord extends EventBaseRecord {
  system_prompt: TextContentRecord;
  /** Tool definitions; their shape changed in v1.7.0: opaque. */
  tools: unknown[];
  dynamic_context?: TextContentRecord;
  kind: 'SystemPromptEvent';
}

/**
 * An ACP diff block (`{type:"diff", path, oldText, newText}` in ACP's JSON, stored by the SDK with
 * pydantic's snake_case names; `old_text` null or absent for a whole-file write).
 */
export interface AcpDiffContentRecord {
  type: 'diff';
  /** Absolute, as ACP requires. */
  path: string;
  old_text?: string | null;
  new_text: string;
}

/**
 * A tool call run by an ACP agent (Claude Code, Codex, Gemini CLI behind the agent server), sent when
 * it starts (`pending`/`in_progress`: the action half) and again once it ends (`completed`/`failed`:
 * the observation half), with the same `tool_call_id`. `tool_kind` is ACP's tool kind (`read`, `edit`,
 * `delete`, `move`, `search`, `execute`, `think`, `fetch`, `other`, ...); `content` holds ACP content
 * blocks (text, `diff`, terminal), `raw_input`/`raw_output` the agent's own JSON.
 * openhands-sdk/openhands/sdk/event/acp_tool_call.py and agent/acp_agent.py@v1.43.1.
 */
export interface AcpToolCallEventRecord extends EventBaseRecord {
  tool_call_id: string;
  title: string;
  status?: 'pending' | 'in_progress' | 'completed' | 'failed';
  tool_kind?: string;
  raw_input?: unknown;
  raw_output?: unknown;
  content?: (AcpDiffContentRecord | Record<string, unknown>)[];
  is_error: boolean;
  kind: 'ACPToolCallEvent';
}

/** The events the local agent server emits. */
export type SdkEventRecord =
  | MessageEventRecord
  | ActionEventRecord
  | ObservationEventRecord
  | UserRejectObservationRecord
  | AgentErrorEventRecord
  | ConversationErrorEventRecord
  | ServerErrorEventRecord
  | ConversationStateUpdateEventRecord
  | PauseEventRecord
  | InterruptEventRecord
  | SystemPromptEventRecord;

export type SdkEventKind = SdkEventRecord['kind'];

/**
 * The fully qualified class names that the agent server's event search `kind` filter compares
 * against (`MessageEvent` alone matches nothing there).
 */
export const QUALIFIED_EVENT_KINDS: Readonly<Record<SdkEventKind, string>> = {
  MessageEvent: 'openhands.sdk.event.llm_convertible.message.MessageEvent',
  ActionEvent: 'openhands.sdk.event.llm_convertible.action.ActionEvent',
  ObservationEvent: 'openhands.sdk.event.llm_convertible.observation.ObservationEvent',
  UserRejectObservation: 'openhands.sdk.event.llm_convertible.observation.UserRejectObservation',
  AgentErrorEvent: 'openhands.sdk.event.llm_convertible.observation.AgentErrorEvent',
  ConversationErrorEvent: 'openhands.sdk.event.conversation_error.ConversationErrorEvent',
  ServerErrorEvent: 'openhands.agent_server.models.ServerErrorEvent',
  ConversationStateUpdateEvent: 'openhands.sdk.event.conversation_state.ConversationStateUpdateEvent',
  PauseEvent: 'openhands.sdk.event.user_action.PauseEvent',
  InterruptEvent: 'openhands.sdk.event.user_action.InterruptEvent',
  SystemPromptEvent: 'openhands.sdk.event.llm_convertible.system.SystemPromptEvent',
};
