/**
 * What a conversation is on the gateway's side of the wire, whichever API answers: the camelCase
 * shapes the port's conversation calls take and return (src/upstream/port/upstream.ts) and the schema
 * resolves. An adapter reads its own wire records into these (V0: src/upstream/v0/conversation-record.ts)
 * and documents the fallback of every field there.
 */
import { charCodeAt } from '../char-code.ts';
import type { UtcDateTime } from '../timestamps.ts';
import { KNOWN_STATUSES, UNKNOWN_VALUE } from './vocabulary.ts';

/**
 * What a raw conversation id must look like to be addressable (also what `conversation(id:)` accepts):
 * 1 to 128 of `A-Z a-z 0-9 _ -`. V0 today sends 32 lowercase hex characters; V1's dashed UUIDs fit
 * the same rule, so it stays here. Read by character code, not by a pattern: every record of every
 * page has one (a pattern test was ~2,000 machine instructions per id under callgrind, this ~1,350).
 */
export function isConversationId(text: string): boolean {
  const length = text.length;
  if (length < 1 || length > 128) return false;
  for (let at = 0; at < length; at++) {
    const code = charCodeAt(text, at);
    const allowed =
      (code >= 97 && code <= 122) || // a-z
      (code >= 48 && code <= 57) || // 0-9
      (code >= 65 && code <= 90) || // A-Z
      code === 95 || // _
      code === 45; // -
    if (!allowed) return false;
  }
  return true;
}

/** A conversation's status read against the vocabulary; one the upstream did not send is UNKNOWN too. */
export function knownStatus(raw: string | null): string {
  return raw !== null && KNOWN_STATUSES.has(raw) ? raw : UNKNOWN_VALUE;
}

/**
 * A conversation as the schema sees it. Each enum-like field is read against its vocabulary
 * (vocabulary.ts: the value when known, UNKNOWN_VALUE for any other string), with the string as sent
 * beside it in its `...Raw` field; both carry the schema's field names, so the schema reads them as
 * plain properties (no resolver call per field and conversation: ~38 KiB less allocated per page of
 * 20). Fields one API lacks are null there: `runtimeStatus`, `numConnections`' count and `url` are
 * V0's (V1 has no runtime status, no connection count, and its `conversation_url` is the agent
 * server's); the optional ones at the end are V1's, absent or null on V0.
 */
export interface Conversation {
  conversationId: string;
  /** Never empty: the upstream's default title when the record has none. */
  title: string;
  /** A known status, or UNKNOWN_VALUE for another string or none (every conversation has a status). */
  status: string;
  /** The status as sent; null when the upstream sent no status string. */
  statusRaw: string | null;
  /** V0 only (null on V1): known, UNKNOWN_VALUE, or null when none was sent. */
  runtimeStatus: string | null;
  runtimeStatusRaw: string | null;
  selectedRepository: string | null;
  selectedBranch: string | null;
  /** Known, UNKNOWN_VALUE, or null when none was sent; as sent in `gitProviderRaw`. */
  gitProvider: string | null;
  gitProviderRaw: string | null;
  /** Known, UNKNOWN_VALUE, or null when none was sent; as sent in `triggerRaw`. */
  trigger: string | null;
  triggerRaw: string | null;
  numConnections: number;
  url: string | null;
  sessionApiKey: string | null;
  /** UTC with `Z`; null when the upstream sent none or an unreadable one. */
  createdAt: UtcDateTime | null;
  lastUpdatedAt: UtcDateTime | null;
  prNumbers: number[];

  // --- V1 only: absent or null on V0 -----------------------------------------------------------------

  /**
   * The agent's `execution_status` (`idle`, `running`, ...) read against the vocabulary (known,
   * UNKNOWN_VALUE); null unless its sandbox runs. As sent in `executionStatusRaw`.
   */
  executionStatus?: string | null;
  executionStatusRaw?: string | null;
  /** The sandbox's status (`STARTING`, `RUNNING`, `PAUSED`, `ERROR`, `MISSING`), read likewise. */
  sandboxStatus?: string | null;
  sandboxStatusRaw?: string | null;
  /** The LLM the agent uses (`llm_model`). */
  llmModel?: string | null;
  /** Cost and token usage so far (`metrics`); null when the upstream sent none. */
  metrics?: ConversationMetrics | null;
  /** The conversation this one was started from (`parent_conversation_id`); null for a top-level one. */
  parentConversationId?: string | null;
  /** Conversations started from this one (`sub_conversation_ids`), in the upstream's order. */
  subConversationIds?: string[] | null;
}

/** Cost and token usage of a conversation (V1 `metrics` and its `accumulated_token_usage`); null where not sent. */
export interface ConversationMetrics {
  /** Accumulated cost, in the LLM provider's currency units (USD for the usual ones). */
  accumulatedCost: number | null;
  /** The budget per task, when one is set. */
  maxBudgetPerTask: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  reasoningTokens: number | null;
  /** The model's context window, in tokens. */
  contextWindow: number | null;
}

/** One page of search results as the upstream cut it (possibly short or empty under filters). */
export interface ConversationPage {
  /**
   * In the upstream's order; null where a record could not be read at all (dropped and logged). The
   * holes keep every conversation at its upstream index, which cursors name.
   */
  conversations: Array<Conversation | null>;
  /** Opaque to the gateway: the adapter's token of the next page, null after the last one. */
  nextPageToken: string | null;
}

/** Which page of a search: the token of a previous page's `nextPageToken` (null: the first) and its size. */
export interface ConversationPageRequest {
  token: string | null;
  limit: number;
}

/**
 * Filters of the search; both are exact matches. V0 applies them upstream after cutting the page (so
 * pages come back short); V1 has neither filter, and its adapter will apply them itself.
 */
export interface ConversationFilter {
  trigger?: string | null;
  repository?: string | null;
}

/** The create input in camelCase; the schema hands it over as is. */
export interface CreateConversationInput {
  repository?: string | null;
  gitProvider?: string | null;
  selectedBranch?: string | null;
  initialUserMessage?: string | null;
  imageUrls?: string[] | null;
  replayJson?: string | null;
  suggestedTask?: {
    gitProvider: string;
    taskType: string;
    repo?: string | null;
    issueNumber?: number | null;
    title?: string | null;
  } | null;
  createMicroagent?: { repo: string; gitProvider?: string | null; title?: string | null } | null;
  conversationInstructions?: string | null;
  mcpConfig?: {
    sseServers?: Array<{ url: string; apiKey?: string | null }> | null;
    stdioServers?: Array<{
      name: string;
      command: string;
      args?: string[] | null;
      env?: Array<{ name: string; value: string }> | null;
    }> | null;
    shttpServers?: Array<{ url: string; apiKey?: string | null }> | null;
  } | null;
  conversationId?: string | null;
}

/** The create answer in camelCase. */
export interface CreatedConversation {
  conversationId: string;
  conversationStatus: string;
  message: string | null;
}

/** The answer of start: the status the upstream reports right after starting. */
export interface StartedConversation {
  conversationStatus: string;
}

/** The answer of stop: whether it was running, and its status before stopping. */
export interface StoppedConversation {
  wasRunning: boolean;
  statusBefore: string;
}
