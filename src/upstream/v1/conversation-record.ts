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
import { type Conversation, type ConversationMetrics, knownStatus } from '../port/conversation.ts';
import {
  KNOWN_EXECUTION_STATUSES,
  KNOWN_GIT_PROVIDERS,
  KNOWN_SANDBOX_STATUSES,
  KNOWN_TRIGGERS,
  knownOrUnknown,
} from '../port/vocabulary.ts';
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

/** The outcome of reading one record for a list: the port's Conversation alone, or why it was dropped. */
export type ConversationReading = { conversation: Conversation; dropped?: undefined } | { dropped: string };

/**
 * Reads one wire record as a list needs it: the Conversation, without the adapter's own fields (the
 * agent server's URL check is 1-2% of a V1 list when every record runs, and a list never uses it).
 */
export function readListedConversation(raw: unknown, timeZone: string): ConversationReading {
  const record = recordOf(raw);
  if (typeof record === 'string') return { dropped: record };
  const conversation = conversationOf(record, timeZone);
  return conversation === null ? { dropped: 'id is not a UUID' } : { conversation };
}

/** Reads one wire record; `timeZone` is the IANA zone of zone-less timestamps. */
export function readAppConversation(raw: unknown, timeZone: string): V1ConversationReading {
  const record = recordOf(raw);
  if (typeof record === 'string') return { dropped: record };
  const conversation = conversationOf(record, timeZone);
  if (conversation === null) return { dropped: 'id is not a UUID' };
  const url = stringOrNull(record.conversation_url);
  const key = stringOrNull(record.session_api_key);
  return {
    read: {
      conversation,
      sandboxId: stringOrNull(record.sandbox_id),
      sandboxStatus: conversation.sandboxStatusRaw ?? null,
      executionStatus: conversation.executionStatusRaw ?? null,
      agent:
        conversation.sandboxStatusRaw === 'RUNNING' && url !== null && key !== null && isAbsoluteHttpUrl(url)
          ? { conversationUrl: url, sessionApiKey: key }
          : null,
    },
  };
}

/** The record as an object, or why it is none. */
function recordOf(raw: unknown): Record<string, unknown> | string {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) return raw as Record<string, unknown>;
  return `the record is ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}`;
}

/** The port's Conversation of a record; null when its id is no UUID. */
function conversationOf(record: Record<string, unknown>, timeZone: string): Conversation | null {
  const id = hexId(record.id);
  if (id === null) return null;
  const sandboxStatus = stringOrNull(record.sandbox_status);
  const executionStatus = stringOrNull(record.execution_status);
  const title = record.title;
  const status = statusOfSandbox(sandboxStatus);
  const gitProvider = stringOrNull(record.git_provider);
  const trigger = stringOrNull(record.trigger);
  return {
    conversationId: id,
    title: typeof title === 'string' && title.trim() !== '' ? title : `Conversation ${id}`,
    status: knownStatus(status),
    statusRaw: status,
    runtimeStatus: null,
    runtimeStatusRaw: null,
    selectedRepository: stringOrNull(record.selected_repository),
    selectedBranch: stringOrNull(record.selected_branch),
    gitProvider: knownOrUnknown(KNOWN_GIT_PROVIDERS, gitProvider),
    gitProviderRaw: gitProvider,
    trigger: knownOrUnknown(KNOWN_TRIGGERS, trigger),
    triggerRaw: trigger,
    numConnections: 0,
    url: null,
    sessionApiKey: null,
    createdAt: upstreamTimestampToUtc(record.created_at, timeZone),
    lastUpdatedAt: upstreamTimestampToUtc(record.updated_at, timeZone),
    prNumbers: Array.isArray(record.pr_number) ? record.pr_number.filter(isGraphQLInt) : [],
    executionStatus: knownOrUnknown(KNOWN_EXECUTION_STATUSES, executionStatus),
    executionStatusRaw: executionStatus,
    sandboxStatus: knownOrUnknown(KNOWN_SANDBOX_STATUSES, sandboxStatus),
    sandboxStatusRaw: sandboxStatus,
    llmModel: stringOrNull(record.llm_model),
    metrics: readMetrics(record.metrics),
    parentConversationId: hexId(record.parent_conversation_id),
    subConversationIds: Array.isArray(record.sub_conversation_ids)
      ? record.sub_conversation_ids.map(hexId).filter((id): id is string => id !== null)
      : [],
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

/**
 * True when `value` parses as a URL (WHATWG) with scheme http or https. The usual shape (scheme, a
 * plain domain or dotted-quad host, a port, then a path) is accepted without a URL parse (a `new URL`
 * per running record was 1-2% of a V1 list); anything else is decided by the parser itself, so both
 * ways accept exactly the same strings (test/gateway/v1-record-fast-paths.test.ts compares them).
 */
export function isAbsoluteHttpUrl(value: string): boolean {
  if (isPlainHttpUrl(value)) return true;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * `http(s)://host[:port]`, then the end or `/`, `?` or `#` (nothing after that can fail a parse). The
 * host is either labels of ASCII letters, digits and inner hyphens whose last starts with a letter (a
 * last label that starts with a digit may be read as an IPv4 number and fail), none of them punycode
 * (`xn--` must decode), or four decimal numbers 0-255 without leading zeros. The port is at most
 * 65535. A string this refuses may still be a URL: the caller then asks the parser. One pass over the
 * characters, no allocation.
 */
function isPlainHttpUrl(value: string): boolean {
  // Scheme, case-insensitively (`| 0x20` lower-cases an ASCII letter).
  if (value.length < 8) return false;
  if (
    (value.charCodeAt(0) | 0x20) !== 0x68 || // h
    (value.charCodeAt(1) | 0x20) !== 0x74 || // t
    (value.charCodeAt(2) | 0x20) !== 0x74 || // t
    (value.charCodeAt(3) | 0x20) !== 0x70 // p
  ) {
    return false;
  }
  let index = (value.charCodeAt(4) | 0x20) === 0x73 ? 5 : 4; // s
  if (!value.startsWith('://', index)) return false;
  index += 3;
  const length = value.length;
  // Host labels: [start, index) of the current one; what the last one looked like.
  let labels = 0;
  let allDecimal = true; // every label so far a decimal 0-255 without a leading zero
  let lastStartsWithLetter = false;
  for (;;) {
    const start = index;
    let number = 0;
    let digitsOnly = true;
    let previous = 0;
    while (index < length) {
      const code = value.charCodeAt(index);
      const lower = code | 0x20;
      if (code >= 0x30 && code <= 0x39) number = number * 10 + (code - 0x30);
      else if (lower >= 0x61 && lower <= 0x7a) digitsOnly = false;
      else if (code === 0x2d) {
        // An inner hyphen only: not first in a label (checked below: not last either).
        if (index === start) return false;
        digitsOnly = false;
      } else break;
      previous = code;
      index++;
    }
    const size = index - start;
    if (size === 0 || previous === 0x2d) return false;
    // Punycode must decode: leave it to the parser.
    if (
      size >= 4 &&
      (value.charCodeAt(start) | 0x20) === 0x78 && // x
      (value.charCodeAt(start + 1) | 0x20) === 0x6e && // n
      value.charCodeAt(start + 2) === 0x2d &&
      value.charCodeAt(start + 3) === 0x2d
    ) {
      return false;
    }
    labels++;
    const first = value.charCodeAt(start) | 0x20;
    lastStartsWithLetter = first >= 0x61 && first <= 0x7a;
    if (!digitsOnly || size > 3 || (size > 1 && value.charCodeAt(start) === 0x30) || number > 255) {
      allDecimal = false;
    }
    if (index < length && value.charCodeAt(index) === 0x2e) {
      index++; // '.', then the next label (an empty one refuses)
      continue;
    }
    break;
  }
  if (!lastStartsWithLetter && !(allDecimal && labels === 4)) return false;
  if (index < length && value.charCodeAt(index) === 0x3a) {
    // ':' then 1-5 digits up to 65535.
    index++;
    const start = index;
    let port = 0;
    while (index < length) {
      const code = value.charCodeAt(index);
      if (code < 0x30 || code > 0x39) break;
      port = port * 10 + (code - 0x30);
      index++;
    }
    if (index === start || index - start > 5 || port > 65_535) return false;
  }
  if (index === length) return true;
  const next = value.charCodeAt(index);
  return next === 0x2f || next === 0x3f || next === 0x23; // '/', '?', '#'
}
