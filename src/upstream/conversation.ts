/**
 * What a conversation is on the gateway's side of the wire: the camelCase shape conversation-record.ts
 * reads each upstream record into, the REST calls (conversations.ts) return and the schema resolves.
 * Its own file because both the reader and the calls need it, and the calls need the reader.
 */

/**
 * A conversation as the schema sees it. Enum-like fields hold the raw wire string. Read from the wire
 * by conversation-record.ts, which documents the fallback of every field.
 */
export interface Conversation {
  conversationId: string;
  /** Never empty: the upstream's default title when the record has none. */
  title: string;
  /** Null when the upstream sent no status string. */
  status: string | null;
  runtimeStatus: string | null;
  selectedRepository: string | null;
  selectedBranch: string | null;
  gitProvider: string | null;
  trigger: string | null;
  numConnections: number;
  url: string | null;
  sessionApiKey: string | null;
  /** UTC with `Z`; null when the upstream sent none or an unreadable one. */
  createdAt: string | null;
  lastUpdatedAt: string | null;
  prNumbers: number[];
}
