/**
 * The per-operation context, built the same way for HTTP and graphql-ws: who is calling (credentials),
 * the upstream port bound to them (src/upstream/port/upstream.ts; which API answers is the composition
 * root's choice, yoga.ts), and loaders that live exactly as long as the operation, so nothing cached
 * for one caller can ever be served to another.
 */
import DataLoader from 'dataloader';
import type {
  ConversationLoader,
  GatewayContext,
  ListedConversations,
  WorkspaceContext,
} from '../schema/context.ts';
import type { UpstreamCredentials } from '../upstream/credentials.ts';
import { DEFAULT_PAGING, type PagingSettings } from '../upstream/page-walker.ts';
import type { Conversation } from '../upstream/port/conversation.ts';
import type { Upstream, UpstreamSession } from '../upstream/port/upstream.ts';
import type { UtcDateTime } from '../upstream/timestamps.ts';

/** Settings the context needs from the gateway. */
export interface ContextSettings {
  /** The gateway's upstream port, bound to each operation's caller. */
  upstream: Upstream;
  /** Key used only when the caller sends none (single-user setups). Secret. */
  defaultSessionApiKey?: string | null | undefined;
  /** @default DEFAULT_PAGING */
  paging?: PagingSettings | undefined;
  /** The workspace's settings, and the archive links sealed for each caller (workspace/). */
  workspace: WorkspaceSettings;
}

/** What the context's workspace part needs from the gateway. */
interface WorkspaceSettings {
  fileMaxBytes: number;
  uploadMaxBytes: number;
  uploadMaxFiles: number;
  sandboxLinks: boolean;
  /** The archive link of a conversation for these credentials, under `base` (the request's origin). */
  archiveLink(
    conversationId: string,
    credentials: UpstreamCredentials,
    base: string | null,
  ): { url: string; expiresAt: UtcDateTime };
}

/**
 * The operation's conversation reads: a DataLoader fed by the operation's list reads, built on first
 * use. Most operations never read a conversation by id (every subscription, for one: thousands of
 * them may be open, each with its own context), and the loader with its cache, the list
 * bookkeeping and their closures were about a kilobyte of heap per context. A list is only noted:
 * its conversations are looked at when the loader asks (indexing every list's 20 ids as it arrived,
 * with a promise to wait for, was ~2% of a list request's machine instructions, for a lookup most
 * operations never make).
 */
class ConversationReads implements ConversationLoader {
  readonly #upstream: UpstreamSession;
  #loader: DataLoader<string, Conversation | null> | undefined;
  /** The operation's list reads so far, in the order they started (running or done). */
  #lists: Promise<ListedConversations>[] | undefined;

  constructor(upstream: UpstreamSession) {
    this.#upstream = upstream;
  }

  load(id: string): Promise<Conversation | null> {
    return this.#dataLoader().load(id);
  }

  clear(id: string): this {
    this.#loader?.clear(id);
    return this;
  }

  /**
   * See GatewayContext.trackList. The list's own resolver awaits it, so a failed list is handled
   * there; here it only means GETs as usual.
   */
  track(list: Promise<ListedConversations>): void {
    this.#lists ??= [];
    this.#lists.push(list);
  }

  #dataLoader(): DataLoader<string, Conversation | null> {
    this.#loader ??= new DataLoader<string, Conversation | null>(async (ids) => {
      const listed = await this.#listedById();
      // Only the ids no list of this operation returned are asked for, in one port call.
      const missing = listed.size > 0 ? ids.filter((id) => !listed.has(id)) : ids;
      const read = missing.length > 0 ? await this.#upstream.getConversations(missing) : [];
      let next = 0;
      return ids.map((id) => listed.get(id) ?? (read[next++] as Conversation | null | Error));
    });
    return this.#loader;
  }

  /** The conversations of the lists started so far, by id, once each has answered (a later list's win). */
  async #listedById(): Promise<Map<string, Conversation>> {
    const byId = new Map<string, Conversation>();
    if (!this.#lists) return byId;
    for (const list of await Promise.allSettled(this.#lists)) {
      if (list.status !== 'fulfilled') continue;
      for (const { node } of list.value.edges) byId.set(node.conversationId, node);
    }
    return byId;
  }
}

/**
 * The workspace part of one operation's context: the settings read through it, and archive links
 * sealed for this caller under the request's origin. A plain member of every context, not a getter
 * building it on first use: envelop merges the context with Object.assign, which calls a getter, so
 * a lazy one was built for every operation anyway (each open subscription held one). This holds
 * three references; the settings stay shared.
 */
class OperationWorkspace implements WorkspaceContext {
  readonly #settings: WorkspaceSettings;
  readonly #credentials: UpstreamCredentials;
  readonly #requestUrl: string | undefined;

  constructor(settings: WorkspaceSettings, credentials: UpstreamCredentials, requestUrl: string | undefined) {
    this.#settings = settings;
    this.#credentials = credentials;
    this.#requestUrl = requestUrl;
  }

  get fileMaxBytes(): number {
    return this.#settings.fileMaxBytes;
  }

  get uploadMaxBytes(): number {
    return this.#settings.uploadMaxBytes;
  }

  get uploadMaxFiles(): number {
    return this.#settings.uploadMaxFiles;
  }

  get sandboxLinks(): boolean {
    return this.#settings.sandboxLinks;
  }

  archiveLink(conversationId: string): { url: string; expiresAt: UtcDateTime } {
    const origin = this.#requestUrl ? new URL(this.#requestUrl).origin : null;
    return this.#settings.archiveLink(conversationId, this.#credentials, origin);
  }
}

/** Builds a fresh context for one operation; `requestUrl` roots the archive links it mints. */
export function createContext(
  settings: ContextSettings,
  credentials: UpstreamCredentials,
  signal: AbortSignal | undefined,
  requestUrl?: string,
): GatewayContext {
  const upstream = settings.upstream.forCaller(credentials, signal);
  const conversationLoader = new ConversationReads(upstream);
  return {
    upstream,
    paging: settings.paging ?? DEFAULT_PAGING,
    conversationLoader,
    trackList: (list) => conversationLoader.track(list),
    workspace: new OperationWorkspace(settings.workspace, credentials, requestUrl),
  };
}

/**
 * The same operation's context over another upstream session: every other member (request, caller,
 * what plugins added) as it is, and fresh conversation reads over `upstream`, so nothing read through
 * the first session is cached for the second. The compiled plans (gateway/compiled/) record the
 * upstream calls of one run and replay them to the engine this way.
 */
export function withUpstreamSession(context: GatewayContext, upstream: UpstreamSession): GatewayContext {
  const conversationLoader = new ConversationReads(upstream);
  const copy = Object.create(
    Object.getPrototypeOf(context),
    Object.getOwnPropertyDescriptors(context),
  ) as GatewayContext;
  copy.upstream = upstream;
  copy.conversationLoader = conversationLoader;
  copy.trackList = (list) => conversationLoader.track(list);
  return copy;
}
