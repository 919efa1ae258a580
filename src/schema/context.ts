/**
 * What every resolver receives. Declared here, by the schema that uses it, so the arrow points one
 * way: src/gateway/context.ts builds it per operation (HTTP and graphql-ws alike).
 */

import type { PagingSettings } from '../upstream/page-walker.ts';
import type { Conversation } from '../upstream/port/conversation.ts';
import type { UpstreamSession } from '../upstream/port/upstream.ts';
import type { UtcDateTime } from '../upstream/timestamps.ts';

/** Conversations by id, batched and cached for one operation (a DataLoader underneath). */
export interface ConversationLoader {
  /** The conversation, or null when the upstream has none with this id. */
  load(id: string): Promise<Conversation | null>;
  /** Forgets a cached read, so the next load asks the upstream again. */
  clear(id: string): ConversationLoader;
}

/** What the workspace fields may do for this operation (src/schema/workspace.ts). */
export interface WorkspaceContext {
  /** Largest text a file read or a diff side returns (`WORKSPACE_FILE_MAX_BYTES`). */
  fileMaxBytes: number;
  /** Largest upload, all files together (`WORKSPACE_UPLOAD_MAX_BYTES`). */
  uploadMaxBytes: number;
  /** Most files in one upload (`WORKSPACE_UPLOAD_MAX_FILES`). */
  uploadMaxFiles: number;
  /** Whether the sandbox's own links may be read (`WORKSPACE_SANDBOX_LINKS`). */
  sandboxLinks: boolean;
  /** A link to the conversation's workspace archive, sealed for this caller and expiring. */
  archiveLink(conversationId: string): { url: string; expiresAt: UtcDateTime };
}

/** What every resolver receives. */
export interface GatewayContext {
  /**
   * The upstream port bound to this caller (credentials, abort signal): every upstream call goes
   * through it, whichever API answers (src/upstream/port/upstream.ts).
   */
  upstream: UpstreamSession;
  /** Conversations by id for this operation; the lists it noted (trackList) answer first, unknown ids load as null. */
  conversationLoader: ConversationLoader;
  /** Bounds of connection fields. */
  paging: PagingSettings;
  /** The workspace's settings and archive links. */
  workspace: WorkspaceContext;
  /**
   * Registers a list read running in this operation. Root fields resolve in parallel, so a `node` next
   * to `conversations` would otherwise be fetched before the list arrives: the loader waits for
   * registered lists and serves the ids they returned without a second upstream call.
   */
  trackList(list: Promise<ListedConversations>): void;
}

/** What a list read answers, as far as the loader cares: its edges' nodes are the conversations. */
export interface ListedConversations {
  edges: ReadonlyArray<{ node: Conversation }>;
}
