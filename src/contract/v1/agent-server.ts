/**
 * Wire shapes of the agent server's REST API (one per sandbox, under `/api`, key in
 * `X-Session-API-Key`), as of agent server v1.43.1 (OpenHands/software-agent-sdk
 * `openhands-agent-server/openhands/agent_server/models.py`; docs/upstream-facts.md, "V1 agent server:
 * REST"). Its
 * conversation ids are dashed UUIDs, unlike the app server's 32 hex.
 */
import type { ExecutionStatusValue, MessageRecord } from './events.ts';

/** A conversation as the agent server answers it (the key fields; real ones carry many more). */
export interface ConversationInfoRecord {
  /** Dashed UUID. */
  id: string;
  title?: string;
  execution_status: ExecutionStatusValue;
  created_at: string;
  updated_at: string;
  max_iterations: number;
  stuck_detection: boolean;
  confirmation_policy: { kind: string };
  workspace: { kind: string; working_dir: string };
  agent: { kind: string; llm: { model: string; usage_id: string } };
  persistence_dir?: string;
  activated_knowledge_skills: string[];
  sub_conversation_ids: string[];
  parent_conversation_id?: string;
  stats: { usage_to_metrics: Record<string, unknown> };
  tags: Record<string, string>;
}

/** Body of POST /api/conversations/{id}/events: `run` defaults to false. */
export interface SendMessageRequestRecord extends MessageRecord {
  run?: boolean;
}

/** Body of POST /api/conversations/{id}/events/respond_to_confirmation. */
export interface ConfirmationResponseRequestRecord {
  accept: boolean;
  reason?: string;
}

/** Body of PATCH /api/conversations/{id}. */
export interface UpdateConversationRequestRecord {
  title?: string;
  tags?: Record<string, string>;
}

/** 500 body of an unhandled exception (`error_id` from v1.27.0). */
export interface AgentServerErrorRecord {
  detail: 'Internal Server Error';
  exception: string;
  error_id?: string;
}

/** The first frame of a socket opened without a key in its query or headers. */
export interface SocketAuthFrameRecord {
  type: 'auth';
  session_api_key: string;
}

/** Close codes of the event socket. */
export const SOCKET_CLOSE = {
  authenticationFailed: { code: 4001, reason: 'Authentication failed' },
  conversationNotFound: { code: 4004, reason: 'Conversation not found' },
  tooManyConnections: { code: 1013, reason: 'Too many connections for this conversation' },
} as const;
