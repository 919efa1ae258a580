/**
 * A V1 conversation as its agent server describes it: the `ConversationInfo` of the REST routes and
 * the `full_state` value the socket sends first. Both carry the DASHED id (a plain UUID there, unlike
 * the app server's hex), null fields omitted.
 */
import type { ConversationInfoRecord } from '../../contract/v1/agent-server.ts';
import { WORKING_DIR } from './file-steps.ts';
import type { V1Conversation } from './records.ts';

/** The model the scripted agent reports when the start request named none. */
export const DEFAULT_LLM_MODEL = 'local/scripted-agent';

/**
 * Any UUID form -> the dashed form the agent server writes. (The gateway's `dashedId`,
 * src/upstream/v1/ids.ts, takes the hex form only.)
 */
export function dashedUuid(id: string): string {
  const hex = id.replaceAll('-', '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Any form Python's `uuid.UUID()` takes (dashed, hex, braces, urn), as the real servers parse ids ->
 * 32 hex, or undefined when it is no UUID. Wider than the gateway's `hexId` (src/upstream/v1/ids.ts),
 * which reads only the two forms the upstream sends.
 */
export function uuidHex(input: string): string | undefined {
  const hex = input
    .trim()
    .replace(/^urn:uuid:/i, '')
    .replace(/^\{(.*)\}$/, '$1')
    .replaceAll('-', '')
    .toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) ? hex : undefined;
}

function common(c: V1Conversation) {
  return {
    agent: { kind: 'Agent', llm: { model: c.llmModel ?? DEFAULT_LLM_MODEL, usage_id: 'agent' } },
    workspace: { kind: 'LocalWorkspace', working_dir: WORKING_DIR },
    persistence_dir: `workspace/conversations/${c.id}`,
    max_iterations: 500,
    stuck_detection: true,
    execution_status: c.executionStatus,
    confirmation_policy: { kind: c.confirmationPolicy },
    activated_knowledge_skills: [] as string[],
    stats: { usage_to_metrics: {} },
    tags: {} as Record<string, string>,
  };
}

/** The whole state, the value of the socket's `full_state` frame. */
export function fullState(c: V1Conversation): Record<string, unknown> {
  return { id: dashedUuid(c.id), ...common(c), secret_registry: {} };
}

/** `ConversationInfo` (agent server v1.43.1: no longer the full state; the key fields). */
export function conversationInfo(c: V1Conversation): ConversationInfoRecord {
  return {
    id: dashedUuid(c.id),
    ...(c.title === null ? {} : { title: c.title }),
    ...common(c),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    sub_conversation_ids: [],
    ...(c.parentConversationId === null
      ? {}
      : { parent_conversation_id: dashedUuid(c.parentConversationId) }),
  };
}
