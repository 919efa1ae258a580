/**
 * Live groups (src/gateway/websocket/live-fan-out.ts) behind the graphql-ws binding, on a real ws server with a
 * small schema whose subscription follows a hub shaped like the bridge's shared stream (each source
 * names the stream it follows as `liveStream`): one source and one execution per event for every
 * subscriber of an operation, graphql-ws's frames, adoption of the operation (the client's
 * `complete`, a reused id, a closed socket), the bound on a subscriber that stops reading, shutdown's
 * last result and error masking. Every server and socket is closed when its test finishes.
 */
import { once } from 'node:events';
import {
  type DocumentNode,
  type ExecutionArgs,
  GraphQLError,
  GraphQLInt,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  LiveFanOut,
  LiveMember,
  markSocketOperation,
  resultsAsYogaMasksThem,
  type StoppableOperation,
} from '../../src/gateway/websocket/live-fan-out.ts';
import { subscribeSharingResults } from '../../src/gateway/websocket/shared-subscription-results.ts';
import { bindingForTest, initialisedSocket, until } from '../helpers/ws-binding.ts';

interface HubEvent {
  n: number;
  blob?: string;
}

/** The shared stream: every attached source receives each pushed event object (the bridge's shape). */
class Hub {
  readonly sources = new Set<HubSource>();
  push(event: HubEvent): void {
    for (const source of this.sources) source.offer(event);
  }
  /** Ends every source's stream (done); they are forgotten. */
  end(): void {
    for (const source of this.sources) source.offer(null);
    this.sources.clear();
  }
}

/** One attached source: a queue and at most one waiting `next()`. */
class HubSource implements AsyncIterableIterator<HubEvent> {
  readonly liveStream: Hub | null;
  #queue: (HubEvent | null)[] = [];
  #waiting: ((step: IteratorResult<HubEvent>) => void) | null = null;
  constructor(hub: Hub) {
    this.liveStream = hub;
    hub.sources.add(this);
  }
  offer(event: HubEvent | null): void {
    if (this.#waiting) {
      const waiting = this.#waiting;
      this.#waiting = null;
      waiting(event ? { value: event, done: false } : { value: undefined, done: true });
    } else this.#queue.push(event);
  }
  next(): Promise<IteratorResult<HubEvent>> {
    if (this.#queue.length) {
      const event = this.#queue.shift();
      return Promise.resolve(event ? { value: event, done: false } : { value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }
  return(): Promise<IteratorResult<HubEvent>> {
    this.liveStream?.sources.delete(this);
    this.#waiting?.({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }
  [Symbol.asyncIterator](): this {
    return this;
  }
}

const QUERY = 'subscription S { events { n label } }';
const BIG_QUERY = 'subscription B { events { n blob } }';

/** A ws server with the binding and a fan-out on port 0, closed when the test finishes. */
async function listen(options: { maxBehind?: number } = {}) {
  const hub = new Hub();
  let executions = 0;
  const masked: unknown[] = [];
  const Event = new GraphQLObjectType<HubEvent>({
    name: 'Event',
    fields: {
      n: { type: GraphQLInt },
      blob: { type: GraphQLString },
      label: {
        type: GraphQLString,
        resolve: (event) => {
          executions++;
          if (event.n === -1) throw new GraphQLError('negative', { extensions: { code: 'NEGATIVE' } });
          if (event.n === -2) throw new Error('internal detail /secret/path');
          return `event ${event.n}`;
        },
      },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        events: { type: Event, subscribe: () => new HubSource(hub), resolve: (event: HubEvent) => event },
      },
    }),
  });
  const fanOut = new LiveFanOut({
    maxBehind: options.maxBehind ?? 1000,
    prepareResult: resultsAsYogaMasksThem({ hideSuggestions: false, onMasked: (e) => masked.push(e) }),
  });
  /** What the observers and shutdown plugins register on a member (operation-observer.ts, shutdown.ts). */
  const ended: { errors: readonly unknown[] }[] = [];
  const open = new Set<StoppableOperation>();
  const documents = new Map<string, DocumentNode>();
  const { url } = await bindingForTest({
    schema,
    subscribe: async (args: ExecutionArgs) => {
      const result = await subscribeSharingResults(args, fanOut);
      if (result instanceof LiveMember) {
        result.watchEnd({ ended: (errors) => ended.push({ errors }) });
        result.stopOnDrain(open);
      }
      return result as never;
    },
    onSubscribe: (_ctx, _id, payload) => {
      // One document object per text, as Yoga's parse cache hands out: operations are keyed by it.
      const document = documents.get(payload.query) ?? parse(payload.query);
      documents.set(payload.query, document);
      const contextValue = {};
      markSocketOperation(contextValue);
      return {
        schema,
        document,
        operationName: payload.operationName ?? null,
        variableValues: payload.variables ?? null,
        contextValue,
      };
    },
  });
  return { url, hub, open, ended, masked, executions: () => executions };
}

/** A client socket, initialised; `subscribe` sends a subscribe message. */
async function client(url: string) {
  const { socket, frames } = await initialisedSocket(url);
  return {
    socket,
    frames,
    subscribe(id: string, query = QUERY) {
      socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query } }));
    },
    /** Frames after the connection ack, parsed. */
    messages: () => frames.slice(1).map((frame) => JSON.parse(frame) as Record<string, unknown>),
  };
}

const nextFrame = (id: string, payload: unknown) => JSON.stringify({ id, type: 'next', payload });

describe('live fan-out over graphql-ws', () => {
  it('serves every subscriber of an operation from one source and one execution, in graphql-ws frames, errors masked', async () => {
    const { url, hub, open, ended, masked, executions } = await listen();
    const a = await client(url);
    const b = await client(url);
    // Ids JSON escapes (a quote, a lone surrogate) and ones it writes as they are (U+2028 included).
    const c = await client(url);
    const d = await client(url);
    a.subscribe('one');
    b.subscribe('two-"quoted"');
    c.subscribe('three-\ud800');
    d.subscribe('four-\u2028');
    await until(() => open.size === 4);
    // The other subscribers' own sources were released: the group follows one.
    expect(hub.sources.size).toBe(1);

    for (const n of [1, -1, -2]) hub.push({ n });
    hub.end();
    await until(() => [a, b, c, d].every((each) => each.frames.length === 5));

    const location = [{ line: 1, column: QUERY.indexOf('label') + 1 }];
    const expected = (id: string) => [
      nextFrame(id, { data: { events: { n: 1, label: 'event 1' } } }),
      nextFrame(id, {
        data: { events: { n: -1, label: null } },
        errors: [
          {
            message: 'negative',
            locations: location,
            path: ['events', 'label'],
            extensions: { code: 'NEGATIVE' },
          },
        ],
      }),
      nextFrame(id, {
        data: { events: { n: -2, label: null } },
        errors: [
          {
            message: 'Unexpected error.',
            locations: location,
            path: ['events', 'label'],
            extensions: { code: 'INTERNAL_SERVER_ERROR', unexpected: true },
          },
        ],
      }),
      JSON.stringify({ id, type: 'complete' }),
    ];
    expect(a.frames.slice(1)).toEqual(expected('one'));
    expect(b.frames.slice(1)).toEqual(expected('two-"quoted"'));
    expect(c.frames.slice(1)).toEqual(expected('three-\ud800'));
    expect(d.frames.slice(1)).toEqual(expected('four-\u2028'));
    expect(executions()).toBe(3);
    expect(masked).toHaveLength(1);
    expect(String(masked[0])).toContain('/secret/path');
    // Each member reported its end once, with the errors its client received.
    expect(ended).toHaveLength(4);
    for (const end of ended)
      expect(end.errors.map((e) => (e as GraphQLError).message)).toEqual(['negative', 'Unexpected error.']);
    expect(open.size).toBe(0);
    expect(hub.sources.size).toBe(0);
  });

  it("a client's complete ends only its member, quietly; the last one out releases the source", async () => {
    const { url, hub, open, ended } = await listen();
    const a = await client(url);
    const b = await client(url);
    a.subscribe('a');
    b.subscribe('b');
    await until(() => open.size === 2);
    hub.push({ n: 1 });
    await until(() => a.frames.length === 2 && b.frames.length === 2);

    a.socket.send(JSON.stringify({ id: 'a', type: 'complete' }));
    await until(() => ended.length === 1);
    hub.push({ n: 2 });
    await until(() => b.frames.length === 3);
    expect(hub.sources.size).toBe(1);

    // The id is free again on that socket: a new subscribe with it joins the group.
    a.subscribe('a');
    await until(() => open.size === 2);
    hub.push({ n: 3 });
    await until(() => a.frames.length === 3 && b.frames.length === 4);
    expect(
      a.messages().map((m) => (m.payload as { data: { events: { n: number } } } | undefined)?.data.events.n),
    ).toEqual([1, 3]);
    expect(a.messages().some((m) => m.type === 'complete')).toBe(false);

    a.socket.send(JSON.stringify({ id: 'a', type: 'complete' }));
    b.socket.send(JSON.stringify({ id: 'b', type: 'complete' }));
    await until(() => hub.sources.size === 0);
    expect(ended.map((end) => end.errors)).toEqual([[], [], []]);
    expect(open.size).toBe(0);
  });

  it('a subscribe reusing the id of an adopted operation closes the socket with 4409; a closed socket ends its members', async () => {
    const { url, hub, open, ended } = await listen();
    const a = await client(url);
    const b = await client(url);
    a.subscribe('same');
    b.subscribe('other');
    await until(() => open.size === 2);
    const closed = once(a.socket, 'close');
    a.subscribe('same');
    const [code, reason] = (await closed) as [number, Buffer];
    expect(code).toBe(4409);
    expect(String(reason)).toBe('Subscriber for same already exists');
    await until(() => ended.length === 1 && open.size === 1);

    hub.push({ n: 7 });
    await until(() => b.frames.length === 2);
    expect(b.messages()[0]).toMatchObject({ id: 'other', type: 'next' });
  });

  it('several live operations on one socket: each completes on its own, its id is free again, a reused live id closes with 4409', async () => {
    // The binding keeps a socket's first adopted operation inline and any more in a map.
    const { url, hub, open, ended } = await listen();
    const a = await client(url);
    for (const id of ['x', 'y', 'z']) a.subscribe(id);
    await until(() => open.size === 3);
    a.socket.send(JSON.stringify({ id: 'x', type: 'complete' }));
    a.socket.send(JSON.stringify({ id: 'z', type: 'complete' }));
    await until(() => ended.length === 2 && open.size === 1);
    hub.push({ n: 1 });
    await until(() => a.frames.length === 2);
    expect(a.frames.slice(1)).toEqual([nextFrame('y', { data: { events: { n: 1, label: 'event 1' } } })]);

    // A completed id may be used again; one still live may not.
    a.subscribe('x');
    await until(() => open.size === 2);
    hub.push({ n: 2 });
    await until(() => a.frames.length === 4);
    expect(
      a
        .messages()
        .slice(1)
        .map((message) => message.id),
    ).toEqual(['y', 'x']);
    // After adoptions graphql-ws's record of the socket's own operations is a fresh object: ids named
    // like Object.prototype's members are still free, and its own operations still run.
    a.subscribe('toString', '{ ok }');
    a.subscribe('__proto__', '{ ok }');
    a.subscribe('constructor', '{ ok }');
    await until(() => a.frames.length === 10);
    for (const id of ['toString', '__proto__', 'constructor']) {
      expect(a.messages().filter((message) => message.id === id)).toEqual([
        { id, type: 'next', payload: { data: { ok: null } } },
        { id, type: 'complete' },
      ]);
    }
    const closed = once(a.socket, 'close');
    a.subscribe('y');
    const [code] = (await closed) as [number];
    expect(code).toBe(4409);
    await until(() => ended.length === 4 && open.size === 0);
  });

  it('ends a member whose client stops reading with SUBSCRIBER_TOO_SLOW; the others get every result', async () => {
    const { url, hub, open, ended } = await listen({ maxBehind: 3 });
    const slow = await client(url);
    const fast = await client(url);
    slow.subscribe('slow', BIG_QUERY);
    fast.subscribe('fast', BIG_QUERY);
    await until(() => open.size === 2);
    // The slow client stops reading: the kernel's buffers fill, then ws's, then results count.
    (slow.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const blob = 'x'.repeat(16 * 1024);
    let pushed = 0;
    while (ended.length === 0 && pushed < 2000) {
      hub.push({ n: pushed++, blob });
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(ended).toHaveLength(1);
    expect(ended[0]?.errors).toEqual([
      expect.objectContaining({ extensions: { code: 'SUBSCRIBER_TOO_SLOW' } }),
    ]);
    hub.push({ n: -10, blob: '' });
    await until(() => fast.frames.length === pushed + 2, 10_000);

    (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    await until(() => slow.messages().at(-1)?.type === 'complete', 10_000);
    const last = slow.messages().at(-2) as { payload: { errors: { extensions: { code: string } }[] } };
    expect(last.payload.errors[0]?.extensions.code).toBe('SUBSCRIBER_TOO_SLOW');
    // It received every result written before the cut, in order, then the error: nothing after it.
    const received = slow
      .messages()
      .slice(0, -2)
      .map((m) => (m.payload as { data: { events: { n: number } } }).data.events.n);
    expect(received).toEqual(received.map((_, index) => index));
    expect(received).toHaveLength(pushed);
  });

  it('shutdown: each member gets one GATEWAY_SHUTTING_DOWN result, then complete', async () => {
    const { url, hub, open, ended } = await listen();
    const a = await client(url);
    a.subscribe('a');
    a.subscribe('b');
    await until(() => open.size === 2);
    for (const operation of open) operation.stop();
    await until(() => a.frames.length === 5);
    for (const id of ['a', 'b']) {
      expect(a.messages().filter((message) => message.id === id)).toEqual([
        {
          id,
          type: 'next',
          payload: { errors: [expect.objectContaining({ extensions: { code: 'GATEWAY_SHUTTING_DOWN' } })] },
        },
        { id, type: 'complete' },
      ]);
    }
    expect(open.size).toBe(0);
    expect(ended).toHaveLength(2);
    expect(hub.sources.size).toBe(0);
  });

  it('bounds what waits for an adoption that never comes: the member is cut and the source released', async () => {
    const hub = new Hub();
    const fanOut = new LiveFanOut({ maxBehind: 3 });
    const contextValue = {};
    markSocketOperation(contextValue);
    const args = { schema: new GraphQLSchema({}), document: parse('{ x }'), contextValue };
    const member = fanOut.join(new HubSource(hub), args, 'key', (event) => ({ data: { event } }));
    expect(member).toBeInstanceOf(LiveMember);
    const ended: (readonly unknown[])[] = [];
    member?.watchEnd({ ended: (errors) => ended.push(errors) });
    for (let n = 0; n < 10; n++) hub.push({ n });
    await until(() => hub.sources.size === 0);
    // Ended while waiting; the observers learn it when the binding lets go of it.
    expect(ended).toEqual([]);
    member?.cancel();
    expect(ended).toEqual([[expect.objectContaining({ extensions: { code: 'SUBSCRIBER_TOO_SLOW' } })]]);
  });

  it('leaves SSE operations (unmarked contexts) and catch-ups (no live stream) to their own streams', () => {
    const hub = new Hub();
    const fanOut = new LiveFanOut();
    const schema = new GraphQLSchema({});
    const document = parse('{ x }');
    const run = () => ({ data: null });
    expect(fanOut.join(new HubSource(hub), { schema, document, contextValue: {} }, 'key', run)).toBeNull();
    const marked = {};
    markSocketOperation(marked);
    const catchUp = Object.assign(new HubSource(hub), { liveStream: null });
    expect(fanOut.join(catchUp, { schema, document, contextValue: marked }, 'key', run)).toBeNull();
  });

  it('a member whose group ended before its adoption gets the results and `complete` at adoption', async () => {
    const hub = new Hub();
    const fanOut = new LiveFanOut();
    const contextValue = {};
    markSocketOperation(contextValue);
    const args = { schema: new GraphQLSchema({}), document: parse('{ x }'), contextValue };
    const member = fanOut.join(new HubSource(hub), args, 'key', (event) => ({ data: { event } }));
    const ended: (readonly unknown[])[] = [];
    member?.watchEnd({ ended: (errors) => ended.push(errors) });
    hub.push({ n: 1 });
    hub.end();
    await until(() => hub.sources.size === 0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toEqual([]);
    // What the member uses of a ws WebSocket: its state and send.
    const sent: string[] = [];
    const socket = { OPEN: 1, readyState: 1, bufferedAmount: 0, send: (data: string) => sent.push(data) };
    const adopted = Object.assign(new Map<string, LiveMember>(), { socket: socket as never });
    member?.adopt('x', adopted);
    expect(sent).toEqual([
      nextFrame('x', { data: { event: { n: 1 } } }),
      JSON.stringify({ id: 'x', type: 'complete' }),
    ]);
    expect(ended).toEqual([[]]);
    // Ended already: it never entered the socket's adopted operations.
    expect(adopted.size).toBe(0);
  });
});
