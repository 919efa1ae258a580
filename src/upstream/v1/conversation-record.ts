/**
 * Reads one V1 `AppConversation` (OpenHands/OpenHands `openhands/app_server/app_conversation/
 * app_conversation_models.py`; docs/upstream-facts.md, "V1 app server: conversations and start tasks")
 * into the port's
 * Conversation, defensively as the V0 reader does: one odd record never costs a page.
 *
 * - `id`: dashed or undashed UUID, kept as 32 lowercase hex; anything else drops the record;
 * - `status`: the sandbox status as V0 status, as the upstream's own V0 shim mapped it (RUNNING,
 *   STARTING, PAUSED -> STOPPED, ERROR, MISSING -> ARCHIVED); an unknown sandbox status is passed on
 *   raw (the schema shows UNKNOWN with `statusRaw`), a missing one is null;
 * - `runtimeStatus`, `url`, `sessionApiKey`: null (V0's; V1 has no runtime status, and the agent
 *   server's `conversation_url` and `session_api_key` stay inside the gateway, which sends the key to
 *   that URL's origin only); `numConnections`: 0 (V1 has no such count);
 * - `title`: the app server's own default `Conversation <32 hex>` when absent;
 * - V1's own: `executionStatus`, `sandboxStatus`, `llmModel` as sent (null when absent), `metrics`
 *   (each number null when absent or not a number), `parentConversationId` (hex), `subConversationIds`;
 * - timestamps: UTC `Z` (naive ones read in UPSTREAM_TIMEZONE), null when unreadable.
 *
 * Beside the Conversation, what the adapter itself needs: the sandbox and where its agent server is.
 */
import { stringOrNull } from '../../contract/json.ts';
import { isGraphQLInt } from '../graphql-int.ts';
import type { Conversation, ConversationMetrics } from '../port/conversation.ts';
import { upstreamTimestampToUtc } from '../timestamps.ts';
import { hexId } from './ids.ts';

/** Where a running conversation's agent server is: only ever sent that conversation's key. */
export interface AgentServerTarget {
  /** `conversation_url` as sent: `<agent server>/api/conversations/<id>`, absolute. */
  conversationUrl: string;
  /** The sandbox's key. Secret: only for the origin of `conversationUrl`. */
  sessionApiKey: string;
}

/** A V1 conversation: the port's view and the adapter's own fields. */
export interface V1Conversation {
  conversation: Conversation;
  sandboxId: string | null;
  /** The raw `sandbox_status` string, null when absent. */
  sandboxStatus: string | null;
  /** The raw `execution_status`, null when absent. */
  executionStatus: string | null;
  /** Null unless the sandbox runs and the record gives both a usable URL and a key. */
  agent: AgentServerTarget | null;
}

/** The outcome of reading one record: the conversation, or why it was dropped (no values). */
export type V1ConversationReading = { read: V1Conversation; dropped?: undefined } | { dropped: string };

/** Sandbox status -> V0 status, as the upstream's V0 shim mapped it (`_to_conversation_info`). */
const STATUS_OF_SANDBOX: Readonly<Record<string, string>> = {
  RUNNING: 'RUNNING',
  STARTING: 'STARTING',
  PAUSED: 'STOPPED',
  ERROR: 'ERROR',
  MISSING: 'ARCHIVED',
};

/** V0's status for a V1 sandbox status: the shim's mapping, the raw value when unknown. */
function statusOfSandbox(sandboxStatus: string | null): string | null {
  if (sandboxStatus === null) return null;
  return STATUS_OF_SANDBOX[sandboxStatus] ?? sandboxStatus;
}

/** Reads one wire record; `timeZone` is the IANA zone of zone-less timestamps. */
export function readAppConversation(raw: unknown, timeZone: string): V1ConversationReading {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return {
      dropped: `the record is ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}`,
    };
  }
  const record = raw as Record<string, unknown>;
  const id = hexId(record.id);
  if (id === null) return { dropped: 'id is not a UUID' };
  const sandboxStatus = stringOrNull(record.sandbox_status);
  const executionStatus = stringOrNull(record.execution_status);
  const running = sandboxStatus === 'RUNNING';
  const url = stringOrNull(record.conversation_url);
  const key = stringOrNull(record.session_api_key);
  const title = record.title;
  return {
    read: {
      conversation: {
        conversationId: id,
        title: typeof title === 'string' && title.trim() !== '' ? title : `Conversation ${id}`,
        status: statusOfSandbox(sandboxStatus),
        runtimeStatus: null,
        selectedRepository: stringOrNull(record.selected_repository),
        selectedBranch: stringOrNull(record.selected_branch),
        gitProvider: stringOrNull(record.git_provider),
        trigger: stringOrNull(record.trigger),
        numConnections: 0,
        url: null,
        sessionApiKey: null,
        createdAt: upstreamTimestampToUtc(record.created_at, timeZone),
        lastUpdatedAt: upstreamTimestampToUtc(record.updated_at, timeZone),
        prNumbers: Array.isArray(record.pr_number) ? record.pr_number.filter(isGraphQLInt) : [],
        executionStatus,
        sandboxStatus,
        llmModel: stringOrNull(record.llm_model),
        metrics: readMetrics(record.metrics),
        parentConversationId: hexId(record.parent_conversation_id),
        subConversationIds: Array.isArray(record.sub_conversation_ids)
          ? record.sub_conversation_ids.map(hexId).filter((id): id is string => id !== null)
          : [],
      },
      sandboxId: stringOrNull(record.sandbox_id),
      sandboxStatus,
      executionStatus,
      agent:
        running && url !== null && key !== null && isAbsoluteHttpUrl(url)
          ? { conversationUrl: url, sessionApiKey: key }
          : null,
    },
  };
}

function readMetrics(raw: unknown): ConversationMetrics | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const metrics = raw as Record<string, unknown>;
  const usage = (
    typeof metrics.accumulated_token_usage === 'object' && metrics.accumulated_token_usage !== null
      ? metrics.accumulated_token_usage
      : {}
  ) as Record<string, unknown>;
  return {
    accumulatedCost: num(metrics.accumulated_cost),
    maxBudgetPerTask: num(metrics.max_budget_per_task),
    promptTokens: num(usage.prompt_tokens),
    completionTokens: num(usage.completion_tokens),
    cacheReadTokens: num(usage.cache_read_tokens),
    cacheWriteTokens: num(usage.cache_write_tokens),
    reasoningTokens: num(usage.reasoning_tokens),
    contextWindow: num(usage.context_window),
  };
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function isAbsoluteHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
