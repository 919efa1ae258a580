/**
 * What every resolver receives. Declared here, by the schema that uses it, so the arrow points one
 * way: src/gateway/context.ts builds it per operation (HTTP and graphql-ws alike).
 */

import type { EventBridge } from '../upstream/bridge/event-bridge.ts';
import type { Conversation } from '../upstream/conversation.ts';
import type { CallScope } from '../upstream/conversations.ts';
import type { PagingSettings } from '../upstream/page-walker.ts';

/** Conversations by id, batched and cached for one operation (a DataLoader underneath). */
export interface ConversationLoader {
  /** The conversation, or null when the upstream has none with this id. */
  load(id: string): Promise<Conversation | null>;
  /** Forgets a cached read, so the next load asks the upstream again. */
  clear(id: string): ConversationLoader;
}

/** What every resolver receives. */
export interface GatewayContext {
  /** Caller scope for upstream calls (client, credentials, abort signal). */
  upstream: CallScope;
  /** Conversations by id for this operation; lists prime it, unknown ids load as null. */
  conversationLoader: ConversationLoader;
  /** The shared Socket.IO bridge (live events, sent actions); one per gateway, not per operation. */
  eventBridge: EventBridge;
  /** Bounds of connection fields. */
  paging: PagingSettings;
  /**
   * Registers a list read running in this operation. Root fields resolve in parallel, so a `node` next
   * to `conversations` would otherwise be fetched before the list arrives: the loader waits for
   * registered lists and serves the ids they returned without a second upstream call.
   */
  trackList(list: Promise<readonly Conversation[]>): void;
}
