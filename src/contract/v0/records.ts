/**
 * Wire shapes of the conversation service (OpenHands server API 0.53), snake_case as they travel.
 *
 * This module is the single description of the upstream contract: the gateway's REST client and
 * socket bridge read these shapes, and the bundled local service (src/local-service) produces them.
 * The facts come from OpenHands 0.53.0 (`openhands/server/routes/manage_conversations.py`,
 * `server/data_models/conversation_info.py`, `listen_socket.py`, `events/serialization/`), summarised
 * with their sources in docs/upstream-facts.md (V0 sections); keep the two in step.
 * Nothing outside src/upstream and src/local-service should import a `*Record` type: the schema
 * speaks camelCase.
 */
import type { SuggestedTaskRecord } from '../common.ts';

/** Conversation status values known in 0.53; later releases add more, so readers must tolerate others. */
export const CONVERSATION_STATUSES = ['STARTING', 'RUNNING', 'STOPPED', 'ARCHIVED', 'ERROR'] as const;
export type ConversationStatusValue = (typeof CONVERSATION_STATUSES)[number];

/** Runtime status values (null on the wire when no agent is running). */
export const RUNTIME_STATUSES = [
  'STATUS$STOPPED',
  'STATUS$BUILDING_RUNTIME',
  'STATUS$STARTING_RUNTIME',
  'STATUS$RUNTIME_STARTED',
  'STATUS$SETTING_UP_WORKSPACE',
  'STATUS$SETTING_UP_GIT_HOOKS',
  'STATUS$READY',
  'STATUS$ERROR',
  'STATUS$ERROR_RUNTIME_DISCONNECTED',
  'STATUS$ERROR_LLM_AUTHENTICATION',
  'STATUS$ERROR_LLM_SERVICE_UNAVAILABLE',
  'STATUS$ERROR_LLM_INTERNAL_SERVER_ERROR',
  'STATUS$ERROR_LLM_OUT_OF_CREDITS',
  'STATUS$ERROR_LLM_CONTENT_POLICY_VIOLATION',
  'CHAT_INTERFACE$AGENT_RATE_LIMITED_STOPPED_MESSAGE',
  'STATUS$GIT_PROVIDER_AUTHENTICATION_ERROR',
  'STATUS$LLM_RETRY',
  'STATUS$ERROR_MEMORY',
] as const;
export type RuntimeStatusValue = (typeof RUNTIME_STATUSES)[number];

/** What started a conversation. `gui` is the default; `openhands_api` for Bearer callers. */
export const CONVERSATION_TRIGGERS = [
  'resolver',
  'gui',
  'suggested_task',
  'openhands_api',
  'slack',
  'microagent_management',
  'jira',
  'jira_dc',
  'linear',
] as const;
export type ConversationTriggerValue = (typeof CONVERSATION_TRIGGERS)[number];

/** Agent states carried by `agent_state_changed` observations and `change_agent_state` actions. */
export const AGENT_STATES = [
  'loading',
  'init',
  'running',
  'awaiting_user_input',
  'paused',
  'stopped',
  'finished',
  'rejected',
  'error',
  'awaiting_user_confirmation',
  'user_confirmed',
  'user_rejected',
  'rate_limited',
] as const;
export type AgentStateValue = (typeof AGENT_STATES)[number];

/** Agent states a client may ask for with `change_agent_state`. */
export const REQUESTABLE_AGENT_STATES = [
  'stopped',
  'paused',
  'running',
  'user_confirmed',
  'user_rejected',
] as const;
export type RequestableAgentStateValue = (typeof REQUESTABLE_AGENT_STATES)[number];

/** A conversation as returned by search and by GET /api/conversations/{id}. Optional fields may be null. */
export interface ConversationRecord {
  conversation_id: string;
  title: string;
  last_updated_at: string | null;
  status: string;
  runtime_status: string | null;
  selected_repository: string | null;
  selected_branch: string | null;
  git_provider: string | null;
  trigger: string | null;
  num_connections: number;
  /** Relative `/api/conversations/{id}` in single-server mode; absolute in nested-runtime mode; null when stopped. */
  url: string | null;
  /** Secret: the nested runtime's key. Null in single-server mode and when stopped. */
  session_api_key: string | null;
  created_at: string;
  pr_number: number[];
}

export interface SseServerRecord {
  url: string;
  /** Secret. */
  api_key?: string | null;
}

export interface StdioServerRecord {
  name: string;
  command: string;
  args?: string[];
  /** Values are secrets. */
  env?: Record<string, string>;
}

export interface McpConfigRecord {
  sse_servers?: SseServerRecord[];
  stdio_servers?: StdioServerRecord[];
  shttp_servers?: SseServerRecord[];
}

export interface CreateMicroagentRecord {
  repo: string;
  git_provider?: string | null;
  title?: string | null;
}

/** Body of POST /api/conversations. Every field is optional; unknown keys are a 422. */
export interface CreateConversationRequestRecord {
  repository?: string | null;
  git_provider?: string | null;
  selected_branch?: string | null;
  initial_user_msg?: string | null;
  image_urls?: string[] | null;
  replay_json?: string | null;
  suggested_task?: SuggestedTaskRecord | null;
  create_microagent?: CreateMicroagentRecord | null;
  conversation_instructions?: string | null;
  mcp_config?: McpConfigRecord | null;
  conversation_id?: string | null;
}

/** 200 answer of POST /api/conversations. */
export interface CreateConversationResponseRecord {
  status: 'ok';
  conversation_id: string;
  message: string | null;
  conversation_status: string;
}

/** 200 answer of GET /api/conversations. */
export interface SearchConversationsResponseRecord {
  results: ConversationRecord[];
  next_page_id: string | null;
}

/** 400 body of POST /api/conversations for domain failures. */
export interface DomainErrorRecord {
  status: 'error';
  message: string;
  msg_id: string;
}

/** Domain error message ids the create call may answer with. */
export const DOMAIN_ERROR_MSG_IDS = [
  'CONFIGURATION$SETTINGS_NOT_FOUND',
  'STATUS$ERROR_LLM_AUTHENTICATION',
  'STATUS$GIT_PROVIDER_AUTHENTICATION_ERROR',
  'CONFIGURATION$MISSING_USER_MESSAGE',
] as const;

/** 200 answer of POST /api/unset-provider-tokens (a string map; today `{message}`). */
export type UnsetProviderTokensResponseRecord = Record<string, string>;

// ---------------------------------------------------------------------------------------------
// Socket events (`oh_event`). Four shapes; the first two share a top level.

interface EventBaseRecord {
  /** Absent only on the closing agent_state_changed a server sends when the session ends. */
  id?: number;
  /** ISO 8601 in the server's local time, with no timezone designator. */
  timestamp?: string;
  source?: 'agent' | 'user' | 'environment';
  message?: string;
  cause?: number;
  timeout?: number;
  tool_call_metadata?: unknown;
  llm_metrics?: unknown;
}

export interface ActionEventRecord extends EventBaseRecord {
  action: string;
  args: Record<string, unknown>;
}

export interface ObservationEventRecord extends EventBaseRecord {
  observation: string;
  content: string;
  extras: Record<string, unknown>;
  success?: boolean;
}

export interface StatusUpdateEventRecord {
  status_update: true;
  type: 'info' | 'error';
  /** A runtime status such as STATUS$READY; absent on title changes. */
  id?: string;
  message: string;
  conversation_title?: string;
}

export interface ErrorEventRecord {
  error: true;
  message: string;
}

export type ConversationEventRecord =
  | ActionEventRecord
  | ObservationEventRecord
  | StatusUpdateEventRecord
  | ErrorEventRecord;

/** What a client sends as `oh_user_action`. */
export type UserActionRecord =
  | {
      action: 'message';
      args: { content: string; image_urls: string[]; file_urls: string[]; timestamp: string };
    }
  | { action: 'change_agent_state'; args: { agent_state: RequestableAgentStateValue } };

/** Socket.IO event names of the conversation socket. */
export const SOCKET_EVENT = {
  serverEvent: 'oh_event',
  userAction: 'oh_user_action',
  legacyUserAction: 'oh_action',
} as const;
