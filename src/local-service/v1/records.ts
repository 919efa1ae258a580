/**
 * The V1 face's stored rows in camelCase (sandboxes, conversations, start tasks, the search filters)
 * and their mapping to and from the SQLite columns of schema-sql.ts. Only v1/store.ts reads columns.
 */
import type {
  AppConversationStartRequestRecord,
  SandboxStatusValue,
  StartTaskStatusValue,
} from '../../contract/v1/app-server.ts';
import type { ExecutionStatusValue } from '../../contract/v1/events.ts';
import type { TenantId } from '../auth.ts';

export interface V1Sandbox {
  id: string;
  tenant: TenantId;
  status: SandboxStatusValue;
  /** Base62 of 32 random bytes. Secret. */
  sessionApiKey: string;
  /** The agent server's loopback port, kept across pause/resume; null before it first listens. */
  port: number | null;
  specId: string;
  createdAt: string;
}

export interface V1Conversation {
  /** 32 lowercase hex. */
  id: string;
  tenant: TenantId;
  sandboxId: string;
  title: string | null;
  selectedRepository: string | null;
  selectedBranch: string | null;
  gitProvider: string | null;
  trigger: string | null;
  prNumber: number[];
  llmModel: string | null;
  parentConversationId: string | null;
  agentType: string;
  /** Later app servers' sharing flag; null until a start request or PATCH sets it. */
  public: boolean | null;
  executionStatus: ExecutionStatusValue;
  /** `NeverConfirm` (the default), `AlwaysConfirm` or `ConfirmRisky`. */
  confirmationPolicy: string;
  createdAt: string;
  updatedAt: string;
}

export interface V1StartTask {
  id: string;
  tenant: TenantId;
  status: StartTaskStatusValue;
  detail: string | null;
  appConversationId: string | null;
  sandboxId: string | null;
  agentServerUrl: string | null;
  request: AppConversationStartRequestRecord;
  createdAt: string;
  updatedAt: string;
}

/** Filters of the app server's conversation search and count (ISO UTC bounds, compared as text). */
export interface ConversationFilters {
  titleContains: string | null;
  createdGte: string | null;
  createdLt: string | null;
  updatedGte: string | null;
  updatedLt: string | null;
  includeSubConversations: boolean;
  /** Later app servers' `sandbox_id__eq`. */
  sandboxId: string | null;
}

/** Filters of the agent server's event search and count, applied in SQL (kind = class name). */
export interface EventFilters {
  kind: string | null;
  source: string | null;
  timestampGte: string | null;
  timestampLt: string | null;
}

export type TaskSort = 'CREATED_AT' | 'CREATED_AT_DESC' | 'UPDATED_AT' | 'UPDATED_AT_DESC';

export const CONVERSATION_COLUMNS = {
  id: 'id',
  tenant: 'tenant',
  sandbox_id: 'sandboxId',
  title: 'title',
  selected_repository: 'selectedRepository',
  selected_branch: 'selectedBranch',
  git_provider: 'gitProvider',
  trigger: 'trigger',
  llm_model: 'llmModel',
  parent_conversation_id: 'parentConversationId',
  agent_type: 'agentType',
  execution_status: 'executionStatus',
  confirmation_policy: 'confirmationPolicy',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
} as const;

export type Row = Record<string, unknown>;

export function toConversation(row: Row): V1Conversation {
  const out: Record<string, unknown> = {
    prNumber: JSON.parse(row.pr_number as string),
    public: row.public === null || row.public === undefined ? null : row.public === 1,
  };
  for (const [column, field] of Object.entries(CONVERSATION_COLUMNS)) out[field] = row[column];
  return out as unknown as V1Conversation;
}

export function fromConversation(c: V1Conversation): Row {
  const row: Row = {
    pr_number: JSON.stringify(c.prNumber),
    public: c.public === null ? null : Number(c.public),
  };
  for (const [column, field] of Object.entries(CONVERSATION_COLUMNS)) row[column] = c[field];
  return row;
}

export function toSandbox(row: Row): V1Sandbox {
  return {
    id: row.id as string,
    tenant: row.tenant as string,
    status: row.status as SandboxStatusValue,
    sessionApiKey: row.session_api_key as string,
    port: row.port as number | null,
    specId: row.spec_id as string,
    createdAt: row.created_at as string,
  };
}

export function toTask(row: Row): V1StartTask {
  return {
    id: row.id as string,
    tenant: row.tenant as string,
    status: row.status as StartTaskStatusValue,
    detail: row.detail as string | null,
    appConversationId: row.app_conversation_id as string | null,
    sandboxId: row.sandbox_id as string | null,
    agentServerUrl: row.agent_server_url as string | null,
    request: JSON.parse(row.request as string) as AppConversationStartRequestRecord,
    createdAt: row.created_at as string,
    updatedAt: row.updated_at as string,
  };
}
