/**
 * `--upstream-api auto`: one port (src/upstream/port/upstream.ts) over whichever adapter the upstream's
 * answers call for. The API is found out once (api-detection.ts) and kept; a call that meets "no such
 * route" (the upstream was replaced by one speaking the other API, e.g. after an upgrade and restart)
 * asks again, at most once per `recheckMs`, and when the answer changed, the call is made once more
 * on the other adapter. Until the API is known, each call first asks (with its caller's credential:
 * an upstream with keys answers nobody without one).
 *
 * A session forwards to one adapter session per API, built on first use, so what an adapter caches
 * for the operation stays with it; the operation's signal is forwarded as the deadline replaces it.
 */
import type { UpstreamApi } from './api-detection.ts';
import type { UpstreamCredentials } from './credentials.ts';
import { UpstreamError } from './failures.ts';
import type { BridgeError } from './port/bridge-error.ts';
import type {
  ConversationFilter,
  ConversationPage,
  ConversationPageRequest,
  CreateConversationInput,
  CreatedConversation,
  StartedConversation,
  StoppedConversation,
} from './port/conversation.ts';
import { UpstreamDomainError } from './port/errors.ts';
import { type EventPosition, openEventCursor } from './port/event-cursor.ts';
import type { ConversationEvent } from './port/events.ts';
import type { LiveEvents, OutgoingMessage, Upstream, UpstreamSession } from './port/upstream.ts';
import type { WorkspaceArgs } from './workspace-calls.ts';

/** Options of {@link createSwitchingUpstream}. */
export interface SwitchingUpstreamOptions {
  adapters: Readonly<Record<UpstreamApi, Upstream>>;
  /** Asks the upstream which API it speaks (null: no clear answer). */
  detect: (credentials: UpstreamCredentials, signal: AbortSignal | undefined) => Promise<UpstreamApi | null>;
  /** Told once per change, the first detection included (for the log line). */
  onDetected?: (api: UpstreamApi, previous: UpstreamApi | null) => void;
  /** Least time between two re-checks after "no such route". @default 5000 */
  recheckMs?: number;
}

/** The switching upstream and what `/ready` reports of it. */
export interface SwitchingUpstream extends Upstream {
  /** The API found out so far, null before the first clear answer. */
  readonly api: UpstreamApi | null;
  /** Finds the API out now when it is not known yet (the gateway's start, `/ready`). Never throws. */
  detectNow(credentials: UpstreamCredentials, signal?: AbortSignal): Promise<UpstreamApi | null>;
}

/** Whether `error` says the upstream has no such route (the other API, or an older release). */
function saysRouteMissing(error: unknown): boolean {
  // V0's writes read a 4xx's `detail` as the upstream's reason: Starlette's 405 reads like this.
  if (error instanceof UpstreamDomainError)
    return error.msgId === null && error.message === 'Method Not Allowed';
  if (!(error instanceof UpstreamError)) return false;
  if (error.code === 'UPSTREAM_ROUTE_MISSING') return true;
  // V0's calls name no route: its web page where JSON was expected is an unreadable 200 to them.
  const status = error.extensions.status;
  return error.code === 'UPSTREAM_ERROR' && (status === 200 || status === 404 || status === 405);
}

/** Builds the `auto` upstream over both adapters. */
export function createSwitchingUpstream(options: SwitchingUpstreamOptions): SwitchingUpstream {
  const recheckMs = options.recheckMs ?? 5_000;
  let api: UpstreamApi | null = null;
  let asking: Promise<UpstreamApi | null> | null = null;
  let lastCheck = 0;

  function ask(
    credentials: UpstreamCredentials,
    signal: AbortSignal | undefined,
  ): Promise<UpstreamApi | null> {
    asking ??= options
      .detect(credentials, signal)
      .catch(() => null)
      .then((found) => {
        lastCheck = Date.now();
        if (found !== null && found !== api) {
          const previous = api;
          api = found;
          options.onDetected?.(found, previous);
        }
        return api;
      })
      .finally(() => {
        asking = null;
      });
    return asking;
  }

  // One choice for the gateway, not one per operation: callers pass their credentials when it must ask.
  const choice: Choice = {
    current: async (credentials, signal) => api ?? (await ask(credentials, signal)) ?? 'v0',
    known: () => api,
    recheck: async (credentials, signal) => {
      if (Date.now() - lastCheck < recheckMs) return api;
      return ask(credentials, signal);
    },
  };
  const switching: SwitchingUpstream = {
    get api() {
      return api;
    },
    detectNow: (credentials, signal) => (api !== null ? Promise.resolve(api) : ask(credentials, signal)),
    forCaller: (credentials, signal) => new SwitchingSession(options.adapters, credentials, signal, choice),
  };
  return switching;
}

/** What a session asks of its switching upstream. */
interface Choice {
  /** The API to call now (V0 when the upstream gave no clear answer: the error then says why). */
  current(credentials: UpstreamCredentials, signal: AbortSignal | undefined): Promise<UpstreamApi>;
  known(): UpstreamApi | null;
  /** Asks again after "no such route"; answers the API then known. */
  recheck(credentials: UpstreamCredentials, signal: AbortSignal | undefined): Promise<UpstreamApi | null>;
}

/** The port for one caller, forwarded to the adapter of the API the upstream speaks. */
class SwitchingSession implements UpstreamSession {
  readonly credentials: UpstreamCredentials;
  readonly #adapters: Readonly<Record<UpstreamApi, Upstream>>;
  readonly #choice: Choice;
  readonly #sessions: Partial<Record<UpstreamApi, UpstreamSession>> = {};
  #signal: AbortSignal | undefined;

  constructor(
    adapters: Readonly<Record<UpstreamApi, Upstream>>,
    credentials: UpstreamCredentials,
    signal: AbortSignal | undefined,
    choice: Choice,
  ) {
    this.#adapters = adapters;
    this.credentials = credentials;
    this.#signal = signal;
    this.#choice = choice;
  }

  get signal(): AbortSignal | undefined {
    return this.#signal;
  }

  /** The deadline replaces the signal: every adapter session built so far sees it too. */
  set signal(signal: AbortSignal | undefined) {
    this.#signal = signal;
    for (const session of Object.values(this.#sessions)) session.signal = signal;
  }

  #session(api: UpstreamApi): UpstreamSession {
    this.#sessions[api] ??= this.#adapters[api].forCaller(this.credentials, this.#signal);
    return this.#sessions[api];
  }

  /**
   * Calls `run` on the current adapter; after "no such route", once more on the other if it changed.
   * Once the API is known (every call but the first few), no await precedes the adapter's call: this
   * wrapper is on every upstream call of every operation, and an extra promise and microtask per call
   * cost the list request about a tenth of its CPU (bench/ab.ts, `auto` against `v0`).
   */
  #call<T>(run: (session: UpstreamSession) => Promise<T>): Promise<T> {
    const known = this.#choice.known();
    if (known === null) return this.#callOnceKnown(run);
    return run(this.#session(known)).catch((error: unknown) => this.#retryElsewhere(run, known, error));
  }

  async #callOnceKnown<T>(run: (session: UpstreamSession) => Promise<T>): Promise<T> {
    const api = await this.#choice.current(this.credentials, this.#signal);
    try {
      return await run(this.#session(api));
    } catch (error) {
      return this.#retryElsewhere(run, api, error);
    }
  }

  async #retryElsewhere<T>(
    run: (session: UpstreamSession) => Promise<T>,
    api: UpstreamApi,
    error: unknown,
  ): Promise<T> {
    if (!saysRouteMissing(error)) throw error;
    const now = await this.#choice.recheck(this.credentials, this.#signal);
    if (now === null || now === api) throw error;
    return run(this.#session(now));
  }

  // Methods, not arrow-function fields: a session is built for every operation, and fields would
  // allocate twelve closures each time.
  searchConversations(page: ConversationPageRequest, filter: ConversationFilter): Promise<ConversationPage> {
    return this.#call((s) => s.searchConversations(page, filter));
  }
  getConversations(ids: readonly string[]): ReturnType<UpstreamSession['getConversations']> {
    return this.#call((s) => s.getConversations(ids));
  }
  createConversation(input: CreateConversationInput): Promise<CreatedConversation> {
    return this.#call((s) => s.createConversation(input));
  }
  deleteConversation(id: string): Promise<void> {
    return this.#call((s) => s.deleteConversation(id));
  }
  renameConversation(id: string, title: string): Promise<void> {
    return this.#call((s) => s.renameConversation(id, title));
  }
  startConversation(
    id: string,
    providers: Parameters<UpstreamSession['startConversation']>[1],
  ): Promise<StartedConversation> {
    return this.#call((s) => s.startConversation(id, providers));
  }
  stopConversation(id: string): Promise<StoppedConversation> {
    return this.#call((s) => s.stopConversation(id));
  }
  readEventsPage(
    id: string,
    walk: Parameters<UpstreamSession['readEventsPage']>[1],
  ): ReturnType<UpstreamSession['readEventsPage']> {
    return this.#call((s) => s.readEventsPage(id, walk));
  }
  sendMessage(
    id: string,
    message: OutgoingMessage,
    options: { echo: boolean },
  ): ReturnType<UpstreamSession['sendMessage']> {
    return this.#call((s) => s.sendMessage(id, message, options));
  }
  changeAgentState(
    id: string,
    state: Parameters<UpstreamSession['changeAgentState']>[1],
  ): Promise<ConversationEvent> {
    return this.#call((s) => s.changeAgentState(id, state));
  }
  unsetProviderTokens(): Promise<Record<string, string>> {
    return this.#call((s) => s.unsetProviderTokens());
  }
  addGitProviderToken(
    token: Parameters<UpstreamSession['addGitProviderToken']>[0],
  ): ReturnType<UpstreamSession['addGitProviderToken']> {
    return this.#call((s) => s.addGitProviderToken(token));
  }

  // The workspace calls: each forwarded with the conversation id and the rest as given.
  workspaceChanges(id: string, ...args: WorkspaceArgs<'workspaceChanges'>) {
    return this.#call((s) => s.workspaceChanges(id, ...args));
  }
  workspaceDiff(id: string, ...args: WorkspaceArgs<'workspaceDiff'>) {
    return this.#call((s) => s.workspaceDiff(id, ...args));
  }
  listWorkspace(id: string, ...args: WorkspaceArgs<'listWorkspace'>) {
    return this.#call((s) => s.listWorkspace(id, ...args));
  }
  readWorkspaceFile(id: string, ...args: WorkspaceArgs<'readWorkspaceFile'>) {
    return this.#call((s) => s.readWorkspaceFile(id, ...args));
  }
  workspaceCommits(id: string, ...args: WorkspaceArgs<'workspaceCommits'>) {
    return this.#call((s) => s.workspaceCommits(id, ...args));
  }
  workspaceCommitChanges(id: string, ...args: WorkspaceArgs<'workspaceCommitChanges'>) {
    return this.#call((s) => s.workspaceCommitChanges(id, ...args));
  }
  uploadWorkspaceFiles(id: string, ...args: WorkspaceArgs<'uploadWorkspaceFiles'>) {
    return this.#call((s) => s.uploadWorkspaceFiles(id, ...args));
  }
  openWorkspaceArchive(id: string) {
    return this.#call((s) => s.openWorkspaceArchive(id));
  }
  workspaceLinks(id: string) {
    return this.#call((s) => s.workspaceLinks(id));
  }

  /** Pure: read by the known API's adapter, or before any answer by the one that minted the token. */
  readEventCursor(cursor: string): EventPosition {
    return this.#session(this.#choice.known() ?? minter(cursor)).readEventCursor(cursor);
  }

  /**
   * Before the API is known, "from the beginning" of whichever adapter the subscription will reach:
   * {@link subscribe} swaps it for that adapter's own start once the API is found out.
   */
  historyStartPosition(): EventPosition {
    const known = this.#choice.known();
    return known === null ? HISTORY_START : this.#session(known).historyStartPosition();
  }

  eventIdPosition(eventId: number): EventPosition {
    return this.#session(this.#choice.known() ?? 'v0').eventIdPosition(eventId);
  }

  subscribe(conversationId: string, after: EventPosition | null): LiveEvents | Promise<LiveEvents> {
    const known = this.#choice.known();
    if (known !== null)
      return this.#session(known).subscribe(conversationId, startOf(after, this.#session(known)));
    // Not known yet: the stream is the chosen adapter's own, handed over once detection answers (the
    // schema's subscribe awaits it). No wrapper: see the port's `subscribe`.
    return this.#choice.current(this.credentials, this.#signal).then((api) => {
      const session = this.#session(api);
      return session.subscribe(conversationId, startOf(after, session));
    });
  }

  endLiveEvents(conversationId: string, error: BridgeError): void {
    for (const api of ['v0', 'v1'] as const) this.#session(api).endLiveEvents(conversationId, error);
  }
}

/** "From the beginning", before the API is known (the adapter's own start replaces it). */
const HISTORY_START: EventPosition = Object.freeze({ api: 'any', parts: Object.freeze(['start']) });

/** `after` for `session`'s adapter: {@link HISTORY_START} becomes that adapter's own start. */
function startOf(after: EventPosition | null, session: UpstreamSession): EventPosition | null {
  return after === HISTORY_START ? session.historyStartPosition() : after;
}

/** The API whose adapter minted a token (a plain decimal is V0's legacy cursor). */
function minter(cursor: string): UpstreamApi {
  try {
    return openEventCursor(cursor).api === 'v1' ? 'v1' : 'v0';
  } catch {
    return 'v0';
  }
}
