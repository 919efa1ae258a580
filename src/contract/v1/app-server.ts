/**
 * Wire shapes of the OpenHands app server's V1 API (`/api/v1/...`): app conversations, start tasks,
 * sandboxes, pages. Snake_case as they travel; ids of conversations and tasks are 32 lowercase hex;
 * datetimes are UTC ISO with `Z`. From OpenHands/OpenHands `openhands/app_server/` (`app_conversation/
 * app_conversation_models.py`, `sandbox/sandbox_models.py`) at main `156d0686c4`, plus the later file
 * versions where marked; facts and sources in docs/upstream-facts.md ("V1 app server" sections).
 */
import type { ExecutionStatusValue, MessageRecord } from './events.ts';

/** A sandbox's status; `MISSING` is the default when the sandbox is gone. */
export const SANDBOX_STATUSES = ['STARTING', 'RUNNING', 'PAUSED', 'ERROR', 'MISSING'] as const;
export type SandboxStatusValue = (typeof SANDBOX_STATUSES)[number];

/** Start-task statuses in the order a start goes through them (`ERROR` from any step after WORKING). */
export const START_TASK_STATUSES = [
  'WORKING',
  'WAITING_FOR_SANDBOX',
  'PREPARING_REPOSITORY',
  'RUNNING_SETUP_SCRIPT',
  'SETTING_UP_GIT_HOOKS',
  'SETTING_UP_SKILLS',
  'STARTING_CONVERSATION',
  'READY',
  'ERROR',
] as const;
export type StartTaskStatusValue = (typeof START_TASK_STATUSES)[number];

/** V1 git providers. */
export const V1_GIT_PROVIDERS = ['github', 'gitlab', 'bitbucket', 'azure_devops', 'enterprise_sso'] as const;
export type V1GitProviderValue = (typeof V1_GIT_PROVIDERS)[number];

/** What started a conversation (null when the start request named none). */
export const V1_TRIGGERS = [
  'resolver',
  'gui',
  'suggested_task',
  'openhands_api',
  'slack',
  'microagent_management',
  'jira',
  'jira_dc',
  'linear',
  'bitbucket',
  'automation',
] as const;

/** `metrics` of an AppConversation. */
export interface MetricsRecord {
  model_name: string;
  accumulated_cost: number;
  max_budget_per_task: number | null;
  accumulated_token_usage: {
    model: string;
    prompt_tokens: number;
    completion_tokens: number;
    cache_read_tokens: number;
    cache_write_tokens: number;
    reasoning_tokens: number;
    context_window: number;
    per_turn_token: number;
    response_id: string;
  };
}

/** A conversation as the app server lists it (search, batch get, PATCH). */
export interface AppConversationRecord {
  id: string;
  created_by_user_id: string | null;
  sandbox_id: string;
  selected_repository: string | null;
  selected_branch: string | null;
  git_provider: V1GitProviderValue | null;
  /** `Conversation <32 hex>` until retitled. */
  title: string | null;
  trigger: string | null;
  pr_number: number[];
  llm_model: string | null;
  metrics: MetricsRecord | null;
  parent_conversation_id: string | null;
  sub_conversation_ids: string[];
  created_at: string;
  updated_at: string;
  sandbox_status: SandboxStatusValue;
  /** Null unless the sandbox is RUNNING and its agent server answered. */
  execution_status: ExecutionStatusValue | null;
  /** `<agent server>/api/conversations/<hex id>`, absolute; null unless the sandbox is RUNNING. */
  conversation_url: string | null;
  /** The sandbox's key; null unless RUNNING. Secret. */
  session_api_key: string | null;
  /** Later app servers: the agent kind (`openhands`), the sharing flag, free-form tags. */
  agent_kind: string;
  public: boolean | null;
  tags: Record<string, string>;
}

/** Body of POST /api/v1/app-conversations (and stream-start); every field optional, unknown keys ignored. */
export interface AppConversationStartRequestRecord {
  sandbox_id: string | null;
  /** A plain UUID: echoed dashed in the task's `request`. */
  conversation_id: string | null;
  initial_message: (MessageRecord & { run: boolean }) | null;
  system_message_suffix: string | null;
  processors: unknown[] | null;
  llm_model: string | null;
  selected_repository: string | null;
  selected_branch: string | null;
  git_provider: V1GitProviderValue | null;
  /** Accepted but ignored at main: the default title is stored. */
  title: string | null;
  trigger: string | null;
  pr_number: number[];
  parent_conversation_id: string | null;
  agent_type: 'default' | 'plan';
  /** Later app servers. `secrets` values are echoed masked, as pydantic dumps a SecretStr. */
  suggested_task: Record<string, unknown> | null;
  public: boolean | null;
  plugins: unknown[] | null;
  secrets: Record<string, string> | null;
}

/** The progress of one start. */
export interface AppConversationStartTaskRecord {
  id: string;
  created_by_user_id: string | null;
  status: StartTaskStatusValue;
  /** The exception text on ERROR (may be ""). */
  detail: string | null;
  app_conversation_id: string | null;
  sandbox_id: string | null;
  agent_server_url: string | null;
  /** The start request echoed, every field present. */
  request: AppConversationStartRequestRecord;
  created_at: string;
  updated_at: string;
}

/** Body of PATCH /api/v1/app-conversations/{id} (later app servers); every field optional. */
export interface AppConversationUpdateRequestRecord {
  title?: string | null;
  public?: boolean | null;
  selected_repository?: string | null;
  selected_branch?: string | null;
  git_provider?: V1GitProviderValue | null;
}

/** 200 answer of POST /api/v1/app-conversations/{id}/send-message (later app servers). */
export interface SendMessageResultRecord {
  success: true;
  sandbox_status: SandboxStatusValue;
  message: string | null;
}

/** Names of a sandbox's `exposed_urls`, in the order a Docker sandbox lists them. */
export const EXPOSED_URL_NAMES = ['AGENT_SERVER', 'VSCODE', 'WORKER_1', 'WORKER_2'] as const;

/** One exposed URL of a running sandbox. */
export interface ExposedUrlRecord {
  name: (typeof EXPOSED_URL_NAMES)[number];
  url: string;
  port: number;
}

export interface SandboxInfoRecord {
  id: string;
  created_by_user_id: string | null;
  sandbox_spec_id: string;
  status: SandboxStatusValue;
  /** Null unless RUNNING. Secret. */
  session_api_key: string | null;
  /** Null unless RUNNING. */
  exposed_urls: ExposedUrlRecord[] | null;
  created_at: string;
}

/** Every V1 page: `next_page_id` is opaque, null on the last page. */
export interface PageRecord<T> {
  items: T[];
  next_page_id: string | null;
}

/** The bare success body (`Success` model). */
export interface SuccessRecord {
  success: boolean;
}

/** `{"detail": "..."}` of HTTPException answers (401, 404, 409, ...). */
export interface DetailRecord {
  detail: string;
}
