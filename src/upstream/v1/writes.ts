/**
 * V1 conversation writes on the app server: create (a start task, with the conversation id supplied
 * here so the id is known at once), delete and rename (the later `/api/v1/app-conversations/{id}`
 * routes), and the caller's git provider tokens (`/api/v1/secrets/git-providers`).
 */
import { randomUUID } from 'node:crypto';
import type {
  AppConversationStartRequestRecord,
  AppConversationStartTaskRecord,
} from '../../contract/v1/app-server.ts';
import type { ContentRecord } from '../../contract/v1/events.ts';
import { unexpectedAnswer } from '../failures.ts';
import type { CreateConversationInput, CreatedConversation } from '../port/conversation.ts';
import { ConversationNotFoundError, UpstreamValidationError } from '../port/errors.ts';
import type { GitProviderValue } from '../port/vocabulary.ts';
import { CLIENT_REJECTION_STATUSES } from '../rejection-errors.ts';
import { suggestedTaskRecord } from '../suggested-task.ts';
import { dashedId, hexId } from './ids.ts';
import { type CallScope, call, secretsOfCall, withRejections } from './scope.ts';

const CONVERSATIONS = '/api/v1/app-conversations';
const ONE = `${CONVERSATIONS}/{id}`;

/**
 * POST /api/v1/app-conversations. The answer is the start task, WORKING; the rest (sandbox, clone,
 * setup, the agent) runs on upstream. The id is supplied in the request, so it is answered at once
 * and the conversation is readable at once (from its start task until READY, see conversations.ts).
 * @throws UpstreamValidationError (422, or an input V1 has no field for), UpstreamDomainError
 */
export async function createConversation(
  scope: CallScope,
  input: CreateConversationInput,
): Promise<CreatedConversation> {
  const id = input.conversationId != null ? hexId(input.conversationId) : randomUUID().replaceAll('-', '');
  if (id === null) {
    throw new UpstreamValidationError([
      { loc: ['body', 'conversation_id'], msg: 'V1 conversation ids are UUIDs', type: 'uuid_parsing' },
    ]);
  }
  const request = toStartRequest(scope, input, id);
  const task = await withRejections(secretsOfCall(scope, request), () =>
    call<AppConversationStartTaskRecord>(scope, {
      method: 'POST',
      path: CONVERSATIONS,
      route: `POST ${CONVERSATIONS}`,
      body: request,
      passThroughStatuses: CLIENT_REJECTION_STATUSES,
    }),
  );
  if (!task || typeof task.id !== 'string') throw unexpectedAnswer();
  return {
    conversationId: id,
    conversationStatus: task.status === 'ERROR' ? 'ERROR' : 'STARTING',
    message: null,
  };
}

/** Inputs V0 had and V1's start request has no field for: refused by name, never dropped silently. */
function unsupported(input: CreateConversationInput): string[] {
  const fields: string[] = [];
  if (input.replayJson != null) fields.push('replay_json');
  if (input.mcpConfig != null) fields.push('mcp_config');
  return fields;
}

function toStartRequest(
  scope: CallScope,
  input: CreateConversationInput,
  id: string,
): Partial<AppConversationStartRequestRecord> {
  const missing = unsupported(input);
  if (missing.length > 0) {
    throw new UpstreamValidationError(
      missing.map((field) => ({
        loc: ['body', field],
        msg: 'not available on the V1 API',
        type: 'unsupported',
      })),
    );
  }
  const task = input.suggestedTask;
  const microagent = input.createMicroagent;
  const repository = input.repository ?? task?.repo ?? microagent?.repo ?? null;
  const content: ContentRecord[] = [];
  if (input.initialUserMessage != null) {
    content.push({ cache_prompt: false, type: 'text', text: input.initialUserMessage });
  }
  if (input.imageUrls != null && input.imageUrls.length > 0) {
    content.push({ cache_prompt: false, type: 'image', image_urls: input.imageUrls });
  }
  // The trigger V0 derived from the input and the caller's credential kind, sent explicitly.
  const trigger = task
    ? 'suggested_task'
    : microagent
      ? 'microagent_management'
      : scope.credentials.kind === 'session-api-key' || scope.credentials.kind === 'none'
        ? 'gui'
        : 'openhands_api';
  return {
    conversation_id: dashedId(id),
    ...(content.length > 0 ? { initial_message: { role: 'user', content, run: true } } : {}),
    ...(repository !== null ? { selected_repository: repository } : {}),
    ...(input.selectedBranch != null ? { selected_branch: input.selectedBranch } : {}),
    ...((input.gitProvider ?? task?.gitProvider ?? microagent?.gitProvider) != null
      ? { git_provider: (input.gitProvider ?? task?.gitProvider ?? microagent?.gitProvider) as never }
      : {}),
    // The nearest V1 field to V0's conversation instructions.
    ...(input.conversationInstructions != null
      ? { system_message_suffix: input.conversationInstructions }
      : {}),
    trigger,
    // Later app servers build the task's prompt from it; older ones ignore it (docs/upstream-apis.md).
    ...(task != null ? { suggested_task: { ...suggestedTaskRecord(task) } } : {}),
  };
}

/** DELETE /api/v1/app-conversations/{id}. @throws ConversationNotFoundError */
export async function deleteConversation(scope: CallScope, conversationId: string): Promise<void> {
  const id = hexId(conversationId);
  if (id === null) throw new ConversationNotFoundError(conversationId);
  await withRejections(
    [],
    () =>
      call<unknown>(scope, {
        method: 'DELETE',
        path: `${CONVERSATIONS}/${id}`,
        route: `DELETE ${ONE}`,
        passThroughStatuses: [400, 404],
      }),
    () => new ConversationNotFoundError(conversationId),
  );
}

/**
 * PATCH /api/v1/app-conversations/{id} `{"title"}`. The app server takes any string; V0 stored the
 * title stripped and refused one outside 1..200 characters, and so does the graph on V1 (checked
 * here, in V0's words), so a rename means the same on both.
 * @throws ConversationNotFoundError, UpstreamValidationError
 */
export async function renameConversation(
  scope: CallScope,
  conversationId: string,
  title: string,
): Promise<void> {
  const id = hexId(conversationId);
  if (id === null) throw new ConversationNotFoundError(conversationId);
  const stripped = title.trim();
  if (stripped.length === 0 || stripped.length > 200) {
    const short = stripped.length === 0;
    throw new UpstreamValidationError([
      {
        loc: ['body', 'title'],
        msg: short ? 'String should have at least 1 character' : 'String should have at most 200 characters',
        type: short ? 'string_too_short' : 'string_too_long',
      },
    ]);
  }
  const body = { title: stripped };
  await withRejections(
    secretsOfCall(scope, body),
    () =>
      call<unknown>(scope, {
        method: 'PATCH',
        path: `${CONVERSATIONS}/${id}`,
        route: `PATCH ${ONE}`,
        body,
        passThroughStatuses: CLIENT_REJECTION_STATUSES,
      }),
    (status) => (status === 404 ? new ConversationNotFoundError(conversationId) : undefined),
  );
}

const GIT_PROVIDERS = '/api/v1/secrets/git-providers';

/** DELETE /api/v1/secrets/git-providers: the whole string map answered. */
export async function unsetProviderTokens(scope: CallScope): Promise<Record<string, string>> {
  const body = await call<unknown>(scope, {
    method: 'DELETE',
    path: GIT_PROVIDERS,
    route: `DELETE ${GIT_PROVIDERS}`,
  });
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw unexpectedAnswer();
  return Object.fromEntries(Object.entries(body).map(([key, value]) => [key, String(value)]));
}

/** POST /api/v1/secrets/git-providers for one provider. @throws UpstreamValidationError, UpstreamDomainError */
export async function addGitProviderToken(
  scope: CallScope,
  token: { provider: GitProviderValue; token: string; host?: string | null },
): Promise<{ message: string | null }> {
  const request = { provider_tokens: { [token.provider]: { token: token.token, host: token.host ?? null } } };
  const body = await withRejections(secretsOfCall(scope, request), () =>
    call<{ message?: unknown }>(scope, {
      method: 'POST',
      path: GIT_PROVIDERS,
      route: `POST ${GIT_PROVIDERS}`,
      body: request,
      passThroughStatuses: CLIENT_REJECTION_STATUSES,
    }),
  );
  return { message: typeof body?.message === 'string' ? body.message : null };
}
