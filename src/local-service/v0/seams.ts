/**
 * The seams between the parts of the local service's V0 face:
 *
 *   REST routes (routes.ts, history-routes.ts)  ──┐
 *                                                 ├─> ConversationStore (store.ts, SQLite)
 *   conversation socket (socket.ts) ── AgentRuntime ┘  (agent.ts)
 *
 * The REST side and the socket side never call each other; both go through the store for data and
 * through the runtime for anything alive (agent loops, connection counts, live events).
 */
import type { GitProviderValue } from '../../contract/common.ts';
import type {
  ConversationEventRecord,
  ConversationStatusValue,
  CreateConversationRequestRecord,
} from '../../contract/v0/records.ts';
import type { TenantId } from '../auth.ts';
import type { ProviderTokens } from '../database.ts';
import type { Workspaces } from '../workspace/workspaces.ts';

/** A conversation as the store keeps it (camelCase; the REST layer turns it into a ConversationRecord). */
export interface StoredConversation {
  tenant: TenantId;
  conversationId: string;
  title: string;
  status: ConversationStatusValue;
  runtimeStatus: string | null;
  selectedRepository: string | null;
  selectedBranch: string | null;
  gitProvider: GitProviderValue | null;
  trigger: string;
  prNumbers: number[];
  /** ISO 8601 UTC with Z. */
  createdAt: string;
  /** ISO 8601 UTC with Z. */
  lastUpdatedAt: string;
  /** The accepted create body, kept for the runtime (instructions, MCP config, replay). Holds secrets: never log it. */
  request: CreateConversationRequestRecord;
  /** Per-conversation runtime key, set only in nested-runtime mode while the agent runs. Secret. */
  sessionApiKey: string | null;
}

export type ConversationPatch = Partial<
  Pick<
    StoredConversation,
    'title' | 'status' | 'runtimeStatus' | 'lastUpdatedAt' | 'sessionApiKey' | 'prNumbers'
  >
>;

/** A stored event: the wire payload with its per-conversation id (0, 1, 2, ...). */
export type StoredEvent = ConversationEventRecord & { id: number };

/** A bounded read of one conversation's events (ids inclusive at both ends). */
interface EventSearch {
  startId: number;
  endId: number | null;
  reverse: boolean;
  limit: number;
}

/**
 * V0's durable state (store.ts). Every write is committed (WAL, synchronous=NORMAL or stronger) before
 * the method returns.
 */
export interface ConversationStore {
  insertConversation(conversation: StoredConversation): void;
  getConversation(tenant: TenantId, conversationId: string): StoredConversation | undefined;
  updateConversation(tenant: TenantId, conversationId: string, patch: ConversationPatch): void;
  /** Newest `createdAt` first (ties broken by insertion order, newest first); `offset`-based like the real server. */
  listConversations(tenant: TenantId, offset: number, limit: number): StoredConversation[];
  /** Assigns the next id of that conversation (continuing after a restart) and stores the event. */
  appendEvent(tenant: TenantId, conversationId: string, event: ConversationEventRecord): StoredEvent;
  /** Events with id > afterId, in id order. */
  listEvents(tenant: TenantId, conversationId: string, afterId: number): StoredEvent[];
  /**
   * Up to `limit` events with startId <= id <= endId (endId null: no upper bound), oldest first, or
   * newest first when `reverse`. Empty for a conversation the tenant does not own.
   */
  searchEvents(tenant: TenantId, conversationId: string, query: EventSearch): StoredEvent[];
  /** Deletes the conversation and all its events in one transaction; false when the tenant owns no such conversation. */
  deleteConversation(tenant: TenantId, conversationId: string): boolean;
  /**
   * Whether any tenant holds this conversation id: ids are unique across tenants, so a create that
   * chooses an id must know whether anyone holds it (without learning whose it is).
   */
  conversationIdExists(conversationId: string): boolean;
  /** Crash recovery at start-up: no agent survives a restart, so STARTING/RUNNING become STOPPED. */
  markAllStopped(): void;
}

/** What the runtime needs to start an agent loop. */
export interface StartAgentOptions {
  /** Stored as a user `message` event once the agent is up. Dropped when the agent is already running. */
  initialUserMessage?: string | null;
  imageUrls?: string[] | null;
}

/**
 * A live event of one conversation: a stored event (numeric id), or one the real server sends without
 * storing it (status updates, whose `id` is a runtime status string, and the closing agent_state_changed
 * observation with no id, timestamp or source).
 */
export type LiveEvent = StoredEvent | ConversationEventRecord;

/** Live events of one conversation as they happen; the socket layer fans them out. */
type LiveEventListener = (event: LiveEvent) => void;

/**
 * The deterministic agent: runs conversations without an LLM. Owns everything that is alive:
 * agent loops, live event fan-out and socket connection counts.
 */
export interface AgentRuntime {
  /** Starts the conversation's agent loop unless it is running; answers whether it already was. */
  start(tenant: TenantId, conversationId: string, options?: StartAgentOptions): { alreadyRunning: boolean };
  isRunning(tenant: TenantId, conversationId: string): boolean;
  /** Handles an `oh_user_action` payload already parsed as an object; returns the stored echo or an error text. */
  acceptUserAction(
    tenant: TenantId,
    conversationId: string,
    action: unknown,
  ): { ok: true; event: StoredEvent } | { ok: false; reason: string };
  /** Subscribes to events appended to a conversation from now on; returns the unsubscribe function. */
  onEvent(tenant: TenantId, conversationId: string, listener: LiveEventListener): () => void;
  /**
   * Stops the conversation's agent loop if it runs: stores the `stopped` agent state, marks the
   * conversation STOPPED and sends the closing observation. Answers whether it was running.
   */
  stop(tenant: TenantId, conversationId: string): boolean;
  /**
   * The conversation is being deleted: stops its loop (as {@link stop}) and tells every
   * {@link onRemoved} listener, so the socket layer disconnects its sockets.
   */
  remove(tenant: TenantId, conversationId: string): void;
  /** Subscribes to the removal of a conversation; returns the unsubscribe function. */
  onRemoved(tenant: TenantId, conversationId: string, listener: () => void): () => void;
  /** Sends the live title-change status update to the conversation's sockets (never stored, like the real server). */
  announceTitle(tenant: TenantId, conversationId: string, title: string): void;
  /** Live socket connections (the record's `num_connections`). */
  connectionCount(tenant: TenantId, conversationId: string): number;
  addConnection(tenant: TenantId, conversationId: string): void;
  removeConnection(tenant: TenantId, conversationId: string): void;
  /**
   * Nested-runtime mode: the tenant owning `conversationId` when `presentedKey` is that conversation's own
   * running agent's `sessionApiKey` (compared in constant time); null otherwise and in single-server mode.
   */
  tenantForSessionKey(conversationId: string, presentedKey: string | undefined): TenantId | null;
  /** Stops every loop (conversations become STOPPED) and timer; pending steps are dropped, stored data stays. */
  close(): Promise<void>;
}

/** Delays of the deterministic agent, in milliseconds. Tests use small values. */
export interface AgentTimings {
  /** From start to RUNNING / STATUS$READY. @default 200 */
  startupMs: number;
  /** From a user message to the agent's answer. @default 300 */
  replyMs: number;
  /** Between played-back events of replay_json. @default 50 */
  replayStepMs: number;
}

/** What the REST routes need (routes.ts, history-routes.ts). */
export interface RouteDeps {
  store: ConversationStore;
  /** The tenants' git provider tokens (the shared database's). */
  tokens: ProviderTokens;
  runtime: AgentRuntime;
  /** The conversations' workspace folders (the workspace routes). */
  workspaces: Workspaces;
  nestedRuntime: boolean;
  /** The service's own origin (`http://127.0.0.1:PORT`), known once listening; used for nested-runtime urls. */
  serviceUrl: () => string;
  /** Clock for created/updated times and the search age cut-off. @default Date.now */
  now?: () => number;
}
