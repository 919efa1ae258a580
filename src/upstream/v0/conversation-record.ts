/**
 * Reads one V0 conversation record, whatever shape it arrives in, into the port's Conversation.
 *
 * The contract says "any of the optional fields may be null", and a newer release, a proxy or another
 * implementation may send null, leave a field out or send the wrong type. One odd record must never
 * cost the answer (a non-null violation would null the whole page by GraphQL's null propagation), so
 * every field is read defensively here, once, with the fallback the schema documents:
 *
 * - no usable `conversation_id` (not a string of 1-128 of `[A-Za-z0-9_-]`): the record cannot be
 *   addressed at all and is dropped (the caller logs a warning); nothing else drops a record;
 * - `title` not a non-empty string: the upstream's own default, `Conversation <first 5 chars of id>`;
 * - `status` not a string: null (the schema shows `UNKNOWN` with a null `statusRaw`);
 * - `num_connections` not a non-negative integer: 0; `pr_number`: the integers in it, else `[]`;
 * - `created_at` / `last_updated_at`: UTC with `Z` (offsets converted, zone-less values read in
 *   `UPSTREAM_TIMEZONE`, see timestamps.ts), null when missing or unreadable;
 * - every other field: the string as sent, or null when it is not a string.
 */
import { stringOrNull } from '../../contract/json.ts';
import { isGraphQLInt } from '../graphql-int.ts';
import { type Conversation, isConversationId, knownStatus } from '../port/conversation.ts';
import {
  KNOWN_GIT_PROVIDERS,
  KNOWN_RUNTIME_STATUSES,
  KNOWN_TRIGGERS,
  knownOrUnknown,
} from '../port/vocabulary.ts';
import { upstreamTimestampToUtc } from '../timestamps.ts';

/** The outcome of reading one record: the conversation, or why it was dropped (no values, no secrets). */
export type ConversationReading =
  | { conversation: Conversation; dropped?: undefined }
  | { conversation?: undefined; dropped: string };

/** Reads one wire record; `timeZone` is the IANA zone of zone-less timestamps. */
export function readConversationRecord(raw: unknown, timeZone: string): ConversationReading {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return {
      dropped: `the record is ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}`,
    };
  }
  const record = raw as Record<string, unknown>;
  const id = record.conversation_id;
  if (typeof id !== 'string' || !isConversationId(id)) {
    return {
      dropped:
        typeof id === 'string' ? 'conversation_id is not a usable id' : `conversation_id is ${describe(id)}`,
    };
  }
  const title = record.title;
  const status = stringOrNull(record.status);
  const runtimeStatus = stringOrNull(record.runtime_status);
  const gitProvider = stringOrNull(record.git_provider);
  const trigger = stringOrNull(record.trigger);
  return {
    conversation: {
      conversationId: id,
      title: typeof title === 'string' && title.trim() !== '' ? title : defaultTitle(id),
      status: knownStatus(status),
      statusRaw: status,
      runtimeStatus: knownOrUnknown(KNOWN_RUNTIME_STATUSES, runtimeStatus),
      runtimeStatusRaw: runtimeStatus,
      selectedRepository: stringOrNull(record.selected_repository),
      selectedBranch: stringOrNull(record.selected_branch),
      gitProvider: knownOrUnknown(KNOWN_GIT_PROVIDERS, gitProvider),
      gitProviderRaw: gitProvider,
      trigger: knownOrUnknown(KNOWN_TRIGGERS, trigger),
      triggerRaw: trigger,
      numConnections: isCount(record.num_connections) ? record.num_connections : 0,
      url: stringOrNull(record.url),
      sessionApiKey: stringOrNull(record.session_api_key),
      createdAt: upstreamTimestampToUtc(record.created_at, timeZone),
      lastUpdatedAt: upstreamTimestampToUtc(record.last_updated_at, timeZone),
      prNumbers: Array.isArray(record.pr_number) ? record.pr_number.filter(isGraphQLInt) : [],
      // V1's fields: V0 records have none of them.
      executionStatus: null,
      executionStatusRaw: null,
      sandboxStatus: null,
      sandboxStatusRaw: null,
      llmModel: null,
      metrics: null,
      parentConversationId: null,
      subConversationIds: null,
    },
  };
}

/** The title the upstream gives a new conversation; used when a record carries none. */
function defaultTitle(conversationId: string): string {
  return `Conversation ${conversationId.slice(0, 5)}`;
}

function isCount(value: unknown): value is number {
  return isGraphQLInt(value) && value >= 0;
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  return `a ${Array.isArray(value) ? 'list' : typeof value}`;
}
