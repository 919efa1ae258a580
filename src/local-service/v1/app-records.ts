/**
 * What the app server's routes share: the `AppConversation` of a stored conversation (its live fields
 * from the sandbox), page ids, and the two kinds of failure answers the real app server gives beside
 * FastAPI's 422 (`{"detail": ...}` HTTPExceptions and the text/plain 500 of an uncaught exception).
 */
import {
  type AppConversationRecord,
  type AppConversationStartTaskRecord,
  EXPOSED_URL_NAMES,
  type ExposedUrlRecord,
  type SandboxInfoRecord,
  type V1GitProviderValue,
} from '../../contract/v1/app-server.ts';
import { type ApiResponse, json, uncaughtError } from '../api-route.ts';
import { DEFAULT_LLM_MODEL } from './conversation-state.ts';
import { WORKING_DIR } from './file-steps.ts';
import type { V1Conversation, V1Sandbox, V1StartTask } from './records.ts';
import type { Sandboxes } from './sandboxes.ts';
import type { V1Store } from './store.ts';

/** `{"detail": "..."}` (an HTTPException). */
export const detail = (status: number, text: string): ApiResponse => json(status, { detail: text });

/** An uncaught exception or failed `assert` in the app server: 500, text/plain. */
export const internalError = uncaughtError;

/** Page ids as later app servers write them: the offset, URL-safe base64 without padding. */
function encodePageId(offset: number): string {
  return Buffer.from(String(offset)).toString('base64url');
}

/** An offset from a page id; anything unreadable restarts at 0, as the real one does. */
export function decodePageId(pageId: string | null): number {
  if (pageId === null) return 0;
  const text = Buffer.from(pageId, 'base64url').toString('utf8');
  return /^\d{1,15}$/.test(text) ? Number(text) : 0;
}

/** A page of `limit` from rows read with one extra (which says whether a next page exists). */
export function page<T, R>(rows: T[], offset: number, limit: number, map: (row: T) => R) {
  return {
    items: rows.slice(0, limit).map(map),
    next_page_id: rows.length > limit ? encodePageId(offset + limit) : null,
  };
}

const ZERO_METRICS = (model: string) => ({
  model_name: model,
  accumulated_cost: 0,
  max_budget_per_task: null,
  accumulated_token_usage: {
    model,
    prompt_tokens: 0,
    completion_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    context_window: 0,
    per_turn_token: 0,
    response_id: '',
  },
});

/**
 * A running sandbox's `exposed_urls`, named and ordered as a Docker sandbox's: the agent server, then
 * VS Code (its URL carries the sandbox key and the project dir, as the Docker sandbox service writes
 * it) and the two app ports. No VS Code or app runs in the local service: their URLs name the agent
 * server's own port, so the key in them never reaches a listener the service does not own.
 */
function exposedUrls(url: string, port: number, key: string): ExposedUrlRecord[] {
  return EXPOSED_URL_NAMES.map((name) => ({
    name,
    url: name === 'VSCODE' ? `${url}/?tkn=${key}&folder=${WORKING_DIR}` : url,
    port,
  }));
}

/** Builds the wire records of the app server from stored rows. */
export function appRecords(store: V1Store, sandboxes: Sandboxes) {
  return {
    conversation(c: V1Conversation): AppConversationRecord {
      const sandbox = store.getSandbox(c.tenant, c.sandboxId);
      const agentUrl = sandbox ? sandboxes.url(sandbox) : null;
      const running = agentUrl !== null;
      const model = c.llmModel ?? DEFAULT_LLM_MODEL;
      return {
        id: c.id,
        created_by_user_id: null,
        sandbox_id: c.sandboxId,
        selected_repository: c.selectedRepository,
        selected_branch: c.selectedBranch,
        git_provider: c.gitProvider as V1GitProviderValue | null,
        title: c.title,
        trigger: c.trigger,
        pr_number: c.prNumber,
        llm_model: model,
        metrics: ZERO_METRICS(model),
        parent_conversation_id: c.parentConversationId,
        sub_conversation_ids: store.subConversationIds(c.id),
        created_at: c.createdAt,
        updated_at: c.updatedAt,
        sandbox_status: sandbox?.status ?? 'MISSING',
        execution_status: running ? c.executionStatus : null,
        conversation_url: running ? `${agentUrl}/api/conversations/${c.id}` : null,
        session_api_key: running && sandbox ? sandbox.sessionApiKey : null,
        agent_kind: 'openhands',
        public: c.public,
        tags: {},
      };
    },
    sandbox(s: V1Sandbox): SandboxInfoRecord {
      const url = sandboxes.url(s);
      return {
        id: s.id,
        created_by_user_id: null,
        sandbox_spec_id: s.specId,
        status: s.status,
        session_api_key: url === null ? null : s.sessionApiKey,
        exposed_urls: url === null ? null : exposedUrls(url, s.port ?? 0, s.sessionApiKey),
        created_at: s.createdAt,
      };
    },
    task(t: V1StartTask): AppConversationStartTaskRecord {
      return {
        id: t.id,
        created_by_user_id: null,
        status: t.status,
        detail: t.detail,
        app_conversation_id: t.appConversationId,
        sandbox_id: t.sandboxId,
        agent_server_url: t.agentServerUrl,
        request: t.request,
        created_at: t.createdAt,
        updated_at: t.updatedAt,
      };
    },
  };
}

/** The record builders of one V1 face. */
export type AppRecords = ReturnType<typeof appRecords>;
