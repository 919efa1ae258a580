import type { TenantId } from '../auth.ts';
import type { StoredConversation } from './seams.ts';

/**
 * A conversation as the real server makes one: titled `Conversation <first 5 of the id>`, started from
 * the GUI, stopped until its agent runs. Creation by REST and the socket's create-on-join both start
 * here, so the two paths cannot drift apart; callers override what their path knows better.
 */
export function newStoredConversation(
  tenant: TenantId,
  conversationId: string,
  fields: Partial<Omit<StoredConversation, 'tenant' | 'conversationId'>> = {},
): StoredConversation {
  const at = fields.createdAt ?? new Date().toISOString();
  return {
    tenant,
    conversationId,
    title: `Conversation ${conversationId.slice(0, 5)}`,
    status: 'STOPPED',
    runtimeStatus: null,
    selectedRepository: null,
    selectedBranch: null,
    gitProvider: null,
    trigger: 'gui',
    prNumbers: [],
    createdAt: at,
    lastUpdatedAt: at,
    request: {},
    sessionApiKey: null,
    ...fields,
  };
}
