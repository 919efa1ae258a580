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
import { UpstreamDomainError } from './port/errors.ts';
import { type EventPosition, openEventCursor } from './port/event-cursor.ts';
import type { ConversationEvent } from './port/events.ts';
import type { Upstream, UpstreamSession } from './port/upstream.ts';

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

  const switching: SwitchingUpstream = {
    get api() {
      return api;
    },
    detectNow: (credentials, signal) => (api !== null ? Promise.resolve(api) : ask(credentials, signal)),
    forCaller: (credentials, signal) =>
      new SwitchingSession(options.adapters, credentials, signal, {
        current: async (s) => api ?? (await ask(credentials, s)) ?? 'v0',
        known: () => api,
        recheck: async (s) => {
          if (Date.now() - lastCheck < recheckMs) return api;
          return ask(credentials, s);
        },
      }),
  };
  return switching;
}

/** What a session asks of its switching upstream. */
interface Choice {
  /** The API to call now (V0 when the upstream gave no clear answer: the error then says why). */
  current(signal: AbortSignal | undefined): Promise<UpstreamApi>;
  known(): UpstreamApi | null;
  /** Asks again after "no such route"; answers the API then known. */
  recheck(signal: AbortSignal | undefined): Promise<UpstreamApi | null>;
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

  /** Calls `run` on the current adapter; after "no such route", once more on the other if it changed. */
  async #call<T>(run: (session: UpstreamSession) => Promise<T>): Promise<T> {
    const api = await this.#choice.current(this.#signal);
    try {
      return await run(this.#session(api));
    } catch (error) {
      if (!saysRouteMissing(error)) throw error;
      const now = await this.#choice.recheck(this.#signal);
      if (now === null || now === api) throw error;
      return run(this.#session(now));
    }
  }

  searchConversations: UpstreamSession['searchConversations'] = (page, filter) =>
    this.#call((s) => s.searchConversations(page, filter));
  getConversations: UpstreamSession['getConversations'] = (ids) => this.#call((s) => s.getConversations(ids));
  createConversation: UpstreamSession['createConversation'] = (input) =>
    this.#call((s) => s.createConversation(input));
  deleteConversation: UpstreamSession['deleteConversation'] = (id) =>
    this.#call((s) => s.deleteConversation(id));
  renameConversation: UpstreamSession['renameConversation'] = (id, title) =>
    this.#call((s) => s.renameConversation(id, title));
  startConversation: UpstreamSession['startConversation'] = (id, providers) =>
    this.#call((s) => s.startConversation(id, providers));
  stopConversation: UpstreamSession['stopConversation'] = (id) => this.#call((s) => s.stopConversation(id));
  readEventsPage: UpstreamSession['readEventsPage'] = (id, walk) =>
    this.#call((s) => s.readEventsPage(id, walk));
  sendMessage: UpstreamSession['sendMessage'] = (id, message, options) =>
    this.#call((s) => s.sendMessage(id, message, options));
  changeAgentState: UpstreamSession['changeAgentState'] = (id, state) =>
    this.#call((s) => s.changeAgentState(id, state));
  unsetProviderTokens: UpstreamSession['unsetProviderTokens'] = () =>
    this.#call((s) => s.unsetProviderTokens());
  addGitProviderToken: UpstreamSession['addGitProviderToken'] = (token) =>
    this.#call((s) => s.addGitProviderToken(token));

  /** Pure: read by the known API's adapter, or before any answer by the one that minted the token. */
  readEventCursor(cursor: string): EventPosition {
    return this.#session(this.#choice.known() ?? minter(cursor)).readEventCursor(cursor);
  }

  historyStartPosition(): EventPosition {
    return this.#session(this.#choice.known() ?? 'v0').historyStartPosition();
  }

  eventIdPosition(eventId: number): EventPosition {
    return this.#session(this.#choice.known() ?? 'v0').eventIdPosition(eventId);
  }

  subscribe(
    conversationId: string,
    after: EventPosition | null,
  ): AsyncIterableIterator<ConversationEvent | BridgeError> {
    const choice = this.#choice;
    const session = (api: UpstreamApi) => this.#session(api);
    const signal = this.#signal;
    return (async function* () {
      yield* session(await choice.current(signal)).subscribe(conversationId, after);
    })();
  }

  endLiveEvents(conversationId: string, error: BridgeError): void {
    for (const api of ['v0', 'v1'] as const) this.#session(api).endLiveEvents(conversationId, error);
  }
}

/** The API whose adapter minted a token (a plain decimal is V0's legacy cursor). */
function minter(cursor: string): UpstreamApi {
  try {
    return openEventCursor(cursor).api === 'v1' ? 'v1' : 'v0';
  } catch {
    return 'v0';
  }
}
