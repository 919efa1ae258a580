/**
 * What every resolver receives. Declared here, by the schema that uses it, so the arrow points one
 * way: src/gateway/context.ts builds it per operation (HTTP and graphql-ws alike).
 */
import type DataLoader from 'dataloader';
import type { CallScope, Conversation } from '../upstream/conversations.ts';
import type { PagingSettings } from '../upstream/page-walker.ts';
import type { EventBridge } from '../upstream/socket.ts';

/** What every resolver receives. */
export interface GatewayContext {
  /** Caller scope for upstream calls (client, credentials, abort signal). */
  upstream: CallScope;
  /** Conversations by id for this operation; lists prime it, unknown ids load as null. */
  conversationLoader: DataLoader<string, Conversation | null>;
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
