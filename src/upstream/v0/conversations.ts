/**
 * V0's typed REST calls of conversations and provider tokens: search, read, create, unset and add
 * tokens. Wire records (snake_case, src/contract/v0/records.ts) are turned into the port's camelCase
 * shapes (src/upstream/port/) here and nowhere else; the V0 adapter (upstream.ts) calls these.
 */

import type { AddGitProvidersRequestRecord } from '../../contract/common.ts';
import type {
  CreateConversationRequestRecord,
  CreateConversationResponseRecord,
  SearchConversationsResponseRecord,
  UnsetProviderTokensResponseRecord,
} from '../../contract/v0/records.ts';
import type { CallScope } from '../call-scope.ts';
import { unexpectedAnswer } from '../failures.ts';
import type {
  Conversation,
  ConversationFilter,
  ConversationPage,
  ConversationPageRequest,
  CreateConversationInput,
  CreatedConversation,
} from '../port/conversation.ts';
import type { GitProviderValue } from '../port/vocabulary.ts';
import { CLIENT_REJECTION_STATUSES, withRejections } from '../rejection-errors.ts';
import { secretsOf } from '../rejection-message.ts';
import { suggestedTaskRecord } from '../suggested-task.ts';
import { readConversationRecord } from './conversation-record.ts';

export type { CallScope } from '../call-scope.ts';

/** GET /api/conversations: one upstream page. */
export async function searchConversations(
  scope: CallScope,
  page: ConversationPageRequest,
  filter: ConversationFilter,
): Promise<ConversationPage> {
  const query = new URLSearchParams({ limit: String(page.limit) });
  if (page.token !== null) query.set('page_id', page.token);
  if (filter.repository != null) query.set('selected_repository', filter.repository);
  if (filter.trigger != null) query.set('conversation_trigger', filter.trigger);
  const body = await scope.client.request<SearchConversationsResponseRecord>({
    method: 'GET',
    path: `/api/conversations?${query}`,
    credentials: scope.credentials,
    signal: scope.signal,
  });
  if (!body || !Array.isArray(body.results)) throw unexpectedAnswer();
  const timeZone = scope.client.timeZone;
  return {
    conversations: body.results.map((raw: unknown, index) => {
      const reading = readConversationRecord(raw, timeZone);
      if (reading.dropped === undefined) return reading.conversation;
      // One unreadable record must not cost the others: leave a hole, say so in the log.
      scope.client.reportDroppedRecord({ path: '/api/conversations', index, reason: reading.dropped });
      return null;
    }),
    nextPageToken: typeof body.next_page_id === 'string' ? body.next_page_id : null,
  };
}

/** GET /api/conversations/{id}: the conversation, or null for an unknown id (the upstream answers 200 null). */
export async function getConversation(
  scope: CallScope,
  conversationId: string,
): Promise<Conversation | null> {
  const path = `/api/conversations/${encodeURIComponent(conversationId)}`;
  const body = await scope.client.request<unknown>({
    method: 'GET',
    path,
    credentials: scope.credentials,
    signal: scope.signal,
  });
  if (body === null) return null;
  const reading = readConversationRecord(body, scope.client.timeZone);
  if (reading.dropped === undefined) return reading.conversation;
  // Only this field fails (it is nullable): there is no page of others to protect.
  scope.client.reportDroppedRecord({ path, index: null, reason: reading.dropped });
  throw unexpectedAnswer();
}

/**
 * POST /api/conversations: create or join.
 * @throws UpstreamValidationError (422), UpstreamDomainError (400 with msg_id), UpstreamError otherwise
 */
export async function createConversation(
  scope: CallScope,
  input: CreateConversationInput,
): Promise<CreatedConversation> {
  const request = toCreateRequest(input);
  const body = await withRejections(secretsOf(scope.credentials, request), () =>
    scope.client.request<CreateConversationResponseRecord>({
      method: 'POST',
      path: '/api/conversations',
      credentials: scope.credentials,
      body: request,
      signal: scope.signal,
      passThroughStatuses: CLIENT_REJECTION_STATUSES,
    }),
  );
  if (!body || typeof body.conversation_id !== 'string') throw unexpectedAnswer();
  return {
    conversationId: body.conversation_id,
    conversationStatus: String(body.conversation_status),
    message: body.message ?? null,
  };
}

/** POST /api/unset-provider-tokens: the whole string map the upstream answered. */
export async function unsetProviderTokens(scope: CallScope): Promise<Record<string, string>> {
  const body = await scope.client.request<UnsetProviderTokensResponseRecord>({
    method: 'POST',
    path: '/api/unset-provider-tokens',
    credentials: scope.credentials,
    signal: scope.signal,
  });
  if (!body || typeof body !== 'object') throw unexpectedAnswer();
  const map: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) map[key] = String(value);
  return map;
}

/** POST /api/add-git-providers for one provider; answers the upstream's message. */
export async function addGitProviderToken(
  scope: CallScope,
  token: { provider: GitProviderValue; token: string; host?: string | null },
): Promise<{ message: string | null }> {
  const request: AddGitProvidersRequestRecord = {
    provider_tokens: { [token.provider]: { token: token.token, host: token.host ?? null } },
  };
  const body = await withRejections(secretsOf(scope.credentials, request), () =>
    scope.client.request<{ message?: unknown }>({
      method: 'POST',
      path: '/api/add-git-providers',
      credentials: scope.credentials,
      body: request,
      signal: scope.signal,
      passThroughStatuses: CLIENT_REJECTION_STATUSES,
    }),
  );
  return { message: typeof body?.message === 'string' ? body.message : null };
}

function toCreateRequest(input: CreateConversationInput): CreateConversationRequestRecord {
  const request: CreateConversationRequestRecord = {};
  // Only send what the caller gave: the upstream treats absent and null alike, and a smaller body is
  // cheaper to validate.
  if (input.repository != null) request.repository = input.repository;
  if (input.gitProvider != null) request.git_provider = input.gitProvider;
  if (input.selectedBranch != null) request.selected_branch = input.selectedBranch;
  if (input.initialUserMessage != null) request.initial_user_msg = input.initialUserMessage;
  if (input.imageUrls != null) request.image_urls = input.imageUrls;
  if (input.replayJson != null) request.replay_json = input.replayJson;
  if (input.conversationInstructions != null) {
    request.conversation_instructions = input.conversationInstructions;
  }
  if (input.conversationId != null) request.conversation_id = input.conversationId;
  if (input.suggestedTask != null) request.suggested_task = suggestedTaskRecord(input.suggestedTask);
  const microagent = input.createMicroagent;
  if (microagent != null) {
    request.create_microagent = {
      repo: microagent.repo,
      ...(microagent.gitProvider != null ? { git_provider: microagent.gitProvider } : {}),
      ...(microagent.title != null ? { title: microagent.title } : {}),
    };
  }
  const mcp = input.mcpConfig;
  if (mcp != null) {
    request.mcp_config = {
      ...(mcp.sseServers != null ? { sse_servers: mcp.sseServers.map(toRemoteServer) } : {}),
      ...(mcp.shttpServers != null ? { shttp_servers: mcp.shttpServers.map(toRemoteServer) } : {}),
      ...(mcp.stdioServers != null
        ? {
            stdio_servers: mcp.stdioServers.map((server) => ({
              name: server.name,
              command: server.command,
              ...(server.args != null ? { args: server.args } : {}),
              ...(server.env != null
                ? { env: Object.fromEntries(server.env.map((entry) => [entry.name, entry.value])) }
                : {}),
            })),
          }
        : {}),
    };
  }
  return request;
}

function toRemoteServer(server: { url: string; apiKey?: string | null }) {
  return server.apiKey != null ? { url: server.url, api_key: server.apiKey } : { url: server.url };
}
