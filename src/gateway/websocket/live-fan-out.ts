/**
 * Live fan-out over graphql-ws: one delivery loop per (conversation socket, operation), writing one
 * serialized payload to every subscriber's WebSocket.
 *
 * Subscribers of a conversation's live events (no `afterEventId`) with the same credential follow the
 * same upstream socket (src/upstream/live/), and those that also sent the same operation (document,
 * operation name, variables) receive exactly the same results. Each such set is a {@link LiveGroup}:
 * it pulls the events of one bridge subscriber, executes each once, serializes the payload once and
 * writes a `next` frame of that payload to each member's socket. A member ({@link LiveMember}) is
 * only that socket, its operation id, and what must happen when it ends. None of the per-operation
 * machinery stays behind it: graphql-ws's suspended `for await`, envelop's result wrappers, the
 * operation's context and arguments, and a promise per layer and event all go once the subscription
 * is adopted by the graphql-ws binding (graphql-ws-binding.ts).
 *
 * Everything before streaming runs as for any operation: graphql-ws's `subscribe` handling, parsing,
 * validation, variables, the budget, the rate limit, the drain refusal, the observers' start. The
 * effects of the stream wrappers are kept explicitly: the observers learn the end with the errors the
 * client received ({@link LiveMember.watchEnd}), shutdown's last GATEWAY_SHUTTING_DOWN result
 * ({@link LiveMember.stop}), error masking ({@link LiveFanOutOptions.prepareResult}), and the bridge's
 * per-subscriber bound: a member whose socket holds more than {@link WS_SEND_HIGH_WATER} unsent bytes
 * and then falls `maxBehind` more results behind ends with SUBSCRIBER_TOO_SLOW.
 *
 * SSE subscriptions and catch-ups (`afterEventId`) keep the per-operation stream: a catch-up is a
 * history of its own before it joins the live events.
 */
import { type ExecutionArgs, type ExecutionResult, GraphQLError } from 'graphql';
import { maskError } from 'graphql-yoga';
import type { WebSocket } from 'ws';
import { streamEndedByShutdown } from '../../errors.ts';
import { BridgeError } from '../../upstream/port/bridge-error.ts';
import { resultWithoutSuggestions } from '../protection/suggestions.ts';
import { corkForThisTurn, nextFramePrefix, serializePayload, WS_SEND_HIGH_WATER } from './ws-frames.ts';

const NO_ERRORS: readonly unknown[] = Object.freeze([]);

/**
 * A socket and its adopted operations by id, which a member enters when it opens and leaves when it
 * ends (a Map with a `socket` fits; the graphql-ws binding keeps the first one inline, since most
 * sockets carry a single subscription).
 */
export interface AdoptedOperations {
  readonly socket: WebSocket;
  get(id: string): LiveMember | undefined;
  set(id: string, member: LiveMember): void;
  delete(id: string): boolean;
}

/**
 * Who learns a member's end (the operation observer's watches). An object rather than a callback, so
 * the observer registers the per-operation object it has anyway instead of a closure over its scope,
 * which every idle subscriber would hold.
 */
export interface EndWatcher {
  ended(errors: readonly unknown[]): void;
}

/** Something shutdown can stop: it sends its last result and leaves the set it was registered in. */
export interface StoppableOperation {
  stop(): void;
}

/** Options of {@link LiveFanOut}. */
export interface LiveFanOutOptions {
  /**
   * Results one member may fall behind once its socket holds WS_SEND_HIGH_WATER unsent bytes, before
   * it ends with SUBSCRIBER_TOO_SLOW (the bridge's maxBufferedEvents). @default 1000
   */
  maxBehind?: number;
  /** What the client sees of a result: Yoga's error masking, suggestions removed. @default identity */
  prepareResult?: (result: ExecutionResult) => ExecutionResult;
}

/**
 * Results as Yoga's `maskedErrors: true` and the suggestions plugin hand them to clients: an unexpected
 * error becomes "Unexpected error." (`onMasked` gets the original, as Yoga logs it), coded ones pass.
 */
export function resultsAsYogaMasksThem(options: {
  hideSuggestions: boolean;
  onMasked: (error: unknown) => void;
}): (result: ExecutionResult) => ExecutionResult {
  return (result) => {
    if (!result.errors) return result;
    const errors = result.errors.map((error) => {
      const masked = maskError(error, 'Unexpected error.') as GraphQLError;
      if (masked !== error) options.onMasked(error);
      return masked;
    });
    const masked = { ...result, errors };
    return options.hideSuggestions ? (resultWithoutSuggestions(masked) ?? masked) : masked;
  };
}

/** True when `id` is its own JSON text between quotes (JSON.stringify escapes nothing in it). */
function writtenAsItIs(id: string): boolean {
  return JSON.stringify(id).length === id.length + 2;
}

/** Contexts of operations that arrived over graphql-ws: only those can be delivered by a group. */
const socketContexts = new WeakSet<object>();

/** Marks an operation context as served over graphql-ws (server.ts, before envelop's subscribe). */
export function markSocketOperation(context: object): void {
  socketContexts.add(context);
}

/** The groups of every process-wide live source: upstream socket entry -> operation key -> group. */
export class LiveFanOut {
  readonly #groups = new WeakMap<object, Map<string, LiveGroup>>();
  readonly #maxBehind: number;
  readonly #prepareResult: (result: ExecutionResult) => ExecutionResult;

  constructor(options: LiveFanOutOptions = {}) {
    this.#maxBehind = options.maxBehind ?? 1000;
    this.#prepareResult = options.prepareResult ?? ((result) => result);
  }

  /**
   * A member for this subscription when a group can deliver it (graphql-ws, live events only), else
   * null and the caller streams `source` itself. A group takes `source` as its own; a later member
   * releases its own source and joins the group.
   */
  join(
    source: AsyncIterator<unknown>,
    args: ExecutionArgs,
    key: string,
    execute: (event: unknown) => ExecutionResult | Promise<ExecutionResult>,
  ): LiveMember | null {
    if (!socketContexts.has(args.contextValue as object)) return null;
    // The bridge's Subscriber names the upstream socket it follows live (subscriber-queue.ts).
    const followed = (source as { liveStream?: object | null }).liveStream ?? null;
    if (followed === null) return null;
    let byKey = this.#groups.get(followed);
    if (!byKey) {
      byKey = new Map();
      this.#groups.set(followed, byKey);
    }
    let group = byKey.get(key);
    if (group && !group.ended) {
      void source.return?.();
    } else {
      group = new LiveGroup(source, execute, this.#prepareResult, this.#maxBehind, () => {
        if (byKey.get(key) === group) byKey.delete(key);
      });
      byKey.set(key, group);
    }
    return group.add();
  }
}

/** The shared loop: one source, one execution and one payload per event, every member written. */
class LiveGroup {
  readonly #source: AsyncIterator<unknown>;
  readonly #execute: (event: unknown) => ExecutionResult | Promise<ExecutionResult>;
  readonly #prepare: (result: ExecutionResult) => ExecutionResult;
  readonly #members = new Set<LiveMember>();
  readonly #forget: () => void;
  readonly maxBehind: number;
  ended = false;

  constructor(
    source: AsyncIterator<unknown>,
    run: (event: unknown) => ExecutionResult | Promise<ExecutionResult>,
    prepare: (result: ExecutionResult) => ExecutionResult,
    maxBehind: number,
    forget: () => void,
  ) {
    this.#source = source;
    this.#execute = run;
    this.#prepare = prepare;
    this.maxBehind = maxBehind;
    this.#forget = forget;
  }

  add(): LiveMember {
    const member = new LiveMember(this);
    this.#members.add(member);
    if (this.#members.size === 1) this.#pull();
    return member;
  }

  /** A member left; the last one releases the source (and with it the upstream socket's lease). */
  leave(member: LiveMember): void {
    if (!this.#members.delete(member) || this.#members.size > 0 || this.ended) return;
    this.#end();
    void Promise.resolve(this.#source.return?.()).catch(() => {});
  }

  readonly #pull = (): void => {
    if (this.ended) return;
    this.#source.next().then(this.#step, this.#fail);
  };

  readonly #step = (step: IteratorResult<unknown>): void => {
    if (this.ended) return;
    if (step.done) {
      this.#end();
      for (const member of this.#members) member.complete();
      this.#members.clear();
      return;
    }
    let result: ExecutionResult | Promise<ExecutionResult>;
    try {
      result = this.#execute(step.value);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (result instanceof Promise) result.then(this.#deliverAndPull, this.#fail);
    else this.#deliverAndPull(result);
  };

  readonly #deliverAndPull = (raw: ExecutionResult): void => {
    if (this.ended) return;
    const result = this.#prepare(raw);
    const payload = serializePayload(result);
    for (const member of this.#members) member.deliver(payload, result.errors);
    this.#pull();
  };

  /** The source itself failed (a bug: the bridge ends with an error item, never a rejection). */
  readonly #fail = (error: unknown): void => {
    if (this.ended) return;
    this.#end();
    const failure = error instanceof GraphQLError ? error : new BridgeError('UPSTREAM_ERROR');
    for (const member of this.#members) member.fail(failure);
    this.#members.clear();
  };

  #end(): void {
    this.ended = true;
    this.#forget();
  }
}

/**
 * One subscriber of a group: its socket, operation id and end hooks. Created in the subscribe phase
 * (envelop's plugins see it as the subscription's result and register their end hooks); the
 * graphql-ws binding then {@link LiveMember.adopt}s it with the socket and id, or cancels it when the
 * client completed meanwhile. Results that arrive before adoption wait in `#early`.
 * Every idle subscriber holds one, so it keeps no field it can reach otherwise (the socket is its
 * socket's adopted operations'), and its helpers are TypeScript-private methods: a `#` method gives
 * every instance a brand slot.
 */
export class LiveMember {
  readonly #group: LiveGroup;
  /**
   * joined: in the group, not adopted yet; open: writing to its socket; closing: ended before adoption
   * with frames still due (written at adoption); done.
   */
  #state: 'joined' | 'open' | 'closing' | 'done' = 'joined';
  /**
   * `{"id":"<id>","type":"next","payload":` (graphql-ws's key order) for an id JSON must escape; null
   * for the usual id, which is written as it is: such a prefix was about 90 bytes per idle
   * subscriber, and building it per frame costs ~40 ns of a delivery's ~15 µs.
   */
  #prefix: string | null = null;
  /** Results waiting for the adoption; null while there are none (most members never hold any). */
  #early: string[] | null = null;
  /** Errors the client received, for the observers' end. */
  #errors: readonly unknown[] = NO_ERRORS;
  /** The observers' end (one watcher: the operation observer registers once). */
  #onEnd: EndWatcher | null = null;
  #stopSet: Set<StoppableOperation> | null = null;
  /** Its socket and the socket's adopted operations, by id, which this member leaves when it ends. */
  #adoptedBy: AdoptedOperations | null = null;
  #id = '';
  /** Results written in a row while the socket held WS_SEND_HIGH_WATER unsent bytes. */
  #behind = 0;

  constructor(group: LiveGroup) {
    this.#group = group;
  }

  /** Its operation id on its socket ('' until adopted). */
  get id(): string {
    return this.#id;
  }

  /** The observers' end: `watcher.ended` is called once, with every error the client received. */
  watchEnd(watcher: EndWatcher): void {
    if (this.#state === 'done') {
      watcher.ended(this.#errors);
      return;
    }
    const previous = this.#onEnd;
    this.#onEnd = previous
      ? {
          ended(errors) {
            previous.ended(errors);
            watcher.ended(errors);
          },
        }
      : watcher;
  }

  /** Shutdown: counted in `open` until its last result is written; the coordinator calls {@link stop}. */
  stopOnDrain(open: Set<StoppableOperation>): void {
    if (this.#state !== 'joined' && this.#state !== 'open') return;
    this.#stopSet = open;
    open.add(this);
  }

  /**
   * The binding hands the member its operation id and its socket's adopted operations (with the
   * socket), which the member enters if it is still open and leaves when it ends. What came before
   * (results, the end) goes out now.
   */
  adopt(id: string, adoptedBy: AdoptedOperations): void {
    if (this.#state !== 'joined' && this.#state !== 'closing') return;
    this.#id = id;
    this.#adoptedBy = adoptedBy;
    this.#prefix = writtenAsItIs(id) ? null : nextFramePrefix(id);
    if (this.#early) for (const payload of this.#early) this.write(payload);
    this.#early = null;
    if (this.#state === 'joined') {
      this.#state = 'open';
      adoptedBy.set(id, this);
      return;
    }
    // Closing: it ended before the adoption, and its `complete` is due.
    this.writeComplete();
    this.finish();
  }

  /** One result of the group. */
  deliver(payload: string, errors: readonly GraphQLError[] | undefined): void {
    // Measured before the write: a frame of this turn sits in the (corked) socket until it ends.
    const waiting = this.#adoptedBy?.socket.bufferedAmount ?? 0;
    if (!this.take(payload, errors, true)) return;
    if (waiting < WS_SEND_HIGH_WATER) this.#behind = 0;
    else if (++this.#behind > this.#group.maxBehind) this.tooSlow();
  }

  /** The group's source ended: `complete` to the client. */
  complete(): void {
    this.end(true);
  }

  /** The group failed (or this member is cut): this error as the last result, then `complete`. */
  fail(error: GraphQLError): void {
    this.take(serializePayload({ errors: [error] }), [error], false);
    this.end(true);
  }

  /**
   * Writes a result (or keeps it until adoption); false when it was not written. `bounded`: the
   * results kept before adoption count against maxBehind (a member's last result does not).
   */
  private take(payload: string, errors: readonly GraphQLError[] | undefined, bounded: boolean): boolean {
    if (this.#state !== 'joined' && this.#state !== 'open') return false;
    if (errors) this.#errors = this.#errors.concat(errors);
    if (this.#state === 'joined') {
      // Bounded like a socket that does not read: an operation that is never adopted cannot grow this.
      this.#early ??= [];
      this.#early.push(payload);
      if (bounded && this.#early.length > this.#group.maxBehind) this.tooSlow();
      return false;
    }
    this.write(payload);
    return true;
  }

  /** Shutdown: one GATEWAY_SHUTTING_DOWN result, then `complete`. */
  stop(): void {
    this.fail(streamEndedByShutdown());
  }

  /** The client sent `complete` or its socket closed (or it never was adopted): nothing more is written. */
  cancel(): void {
    if (this.#state === 'closing') this.finish();
    else this.end(false);
  }

  private tooSlow(): void {
    this.fail(
      new BridgeError(
        'SUBSCRIBER_TOO_SLOW',
        `The subscriber fell more than ${this.#group.maxBehind} events behind and was disconnected.`,
      ),
    );
  }

  private end(sendComplete: boolean): void {
    if (this.#state !== 'joined' && this.#state !== 'open') return;
    const adopted = this.#state === 'open';
    this.#group.leave(this);
    this.#stopSet?.delete(this);
    this.#stopSet = null;
    if (!adopted && sendComplete) {
      // Not adopted yet: its frames go out at adoption.
      this.#state = 'closing';
      return;
    }
    if (sendComplete) this.writeComplete();
    this.finish();
  }

  private finish(): void {
    this.#state = 'done';
    this.#early = null;
    if (this.#adoptedBy?.get(this.#id) === this) this.#adoptedBy.delete(this.#id);
    this.#adoptedBy = null;
    const onEnd = this.#onEnd;
    this.#onEnd = null;
    onEnd?.ended(this.#errors);
  }

  private write(payload: string): void {
    const prefix = this.#prefix;
    this.send(
      prefix === null ? `{"id":"${this.#id}","type":"next","payload":${payload}}` : `${prefix}${payload}}`,
    );
  }

  /** graphql-ws's `complete` frame. */
  private writeComplete(): void {
    this.send(`{"id":${JSON.stringify(this.#id)},"type":"complete"}`);
  }

  private send(frame: string): void {
    const socket = this.#adoptedBy?.socket;
    if (!socket || socket.readyState !== socket.OPEN) return;
    corkForThisTurn(socket);
    socket.send(frame);
  }
}
