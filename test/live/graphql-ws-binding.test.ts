/**
 * The graphql-ws binding (src/gateway/websocket/graphql-ws-binding.ts) on a real ws server with a small schema:
 * the frames it writes are exactly graphql-ws's own (payload spliced from the shared serialization,
 * errors included), frames of one turn arrive complete and in order, a message only servers send
 * closes the socket with 4400 (ws-guard.ts), and the shared keep-alive
 * terminates a client that stops answering pings. Every server and socket is closed when its test finishes.
 */
import { once } from 'node:events';
import {
  type ExecutionResult,
  GraphQLError,
  GraphQLInt,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
} from 'graphql';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import { subscribeSharingResults } from '../../src/gateway/websocket/shared-subscription-results.ts';
import { bindingForTest, initialisedSocket, until } from '../helpers/ws-binding.ts';

/** Events every subscriber receives, the same objects for all (as the bridge hands them out). */
const EVENTS = [{ n: 1 }, { n: 2 }, { n: -1 }, { n: 3 }];

const Event = new GraphQLObjectType<{ n: number }>({
  name: 'Event',
  fields: {
    n: { type: GraphQLInt },
    label: {
      type: GraphQLString,
      resolve: (event) => {
        if (event.n < 0) throw new GraphQLError('negative', { extensions: { code: 'NEGATIVE' } });
        return `event "${event.n}" \u00e9\u2028`;
      },
    },
  },
});

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt, resolve: () => 1 } } }),
  subscription: new GraphQLObjectType({
    name: 'Subscription',
    fields: {
      events: {
        type: Event,
        subscribe: async function* () {
          // All events in one turn: the binding corks the socket and writes them together.
          for (const event of EVENTS) yield event;
        },
        resolve: (event: { n: number }) => event,
      },
    },
  }),
});

const QUERY = '{ ok } subscription S { events { n label } }';

/** What graphql-ws's own `useServer` writes for a `next` message. */
function graphqlWsFrame(id: string, result: ExecutionResult): string {
  const { errors, ...rest } = result;
  return JSON.stringify({
    id,
    type: 'next',
    payload: {
      ...rest,
      ...(errors ? { errors: errors.map((error) => (error as GraphQLError).toJSON()) } : {}),
    },
  });
}

/** The binding on port 0 with the schema above; closed when the test finishes. */
function listen(keepAliveMs?: number) {
  return bindingForTest(
    {
      schema,
      subscribe: (args) => subscribeSharingResults(args) as never,
      onSubscribe: (_ctx, _id, payload) => ({
        schema,
        document: parse(payload.query),
        operationName: payload.operationName ?? null,
        variableValues: payload.variables ?? null,
      }),
    },
    keepAliveMs,
  );
}

/** Opens a socket, initialises and subscribes with `id`; `frames` holds every text frame received. */
async function subscribe(url: string, id: string, options: { autoPong?: boolean } = {}) {
  const client = await initialisedSocket(url, options);
  client.socket.send(
    JSON.stringify({ id, type: 'subscribe', payload: { query: QUERY, operationName: 'S' } }),
  );
  return client;
}

describe('graphql-ws binding', () => {
  it('writes the same frames as graphql-ws, errors included, to every subscriber with its own id', async () => {
    const { url } = await listen();
    const first = await subscribe(url, 'first');
    const second = await subscribe(url, 'second-"quoted"');
    await until(() => first.frames.length >= 6 && second.frames.length >= 6);

    // GraphQLError#toJSON order: message, locations, path, extensions.
    const errorFrame = (id: string) =>
      JSON.stringify({
        id,
        type: 'next',
        payload: {
          data: { events: { n: -1, label: null } },
          errors: [
            {
              message: 'negative',
              locations: [{ line: 1, column: QUERY.indexOf('label') + 1 }],
              path: ['events', 'label'],
              extensions: { code: 'NEGATIVE' },
            },
          ],
        },
      });
    const expected = (id: string) => [
      JSON.stringify({ type: 'connection_ack' }),
      ...EVENTS.map((event) =>
        event.n < 0
          ? errorFrame(id)
          : graphqlWsFrame(id, {
              data: { events: { n: event.n, label: `event "${event.n}" \u00e9\u2028` } },
            }),
      ),
      JSON.stringify({ id, type: 'complete' }),
    ];
    expect(first.frames).toEqual(expected('first'));
    expect(second.frames).toEqual(expected('second-"quoted"'));
  });

  it('terminates a client that stops answering pings and keeps one that answers', async () => {
    const { url } = await listen(100);
    const silent = await subscribe(url, 'a', { autoPong: false });
    const answering = await subscribe(url, 'b');
    const [code] = (await once(silent.socket, 'close')) as [number];
    // terminate(): no close frame, so the client sees an abnormal closure.
    expect(code).toBe(1006);
    expect(answering.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('closes a socket that sends a message only servers send with 4400, not as an internal error', async () => {
    const { url } = await listen();
    const client = await subscribe(url, 'a');
    const closed = once(client.socket, 'close');
    client.socket.send(JSON.stringify({ id: 'a', type: 'next', payload: { data: null } }));
    const [code, reason] = (await closed) as [number, Buffer];
    expect(code).toBe(4400);
    expect(String(reason)).toBe('Invalid message received');
  });

  it('closes a socket without connection_init in time with 4408, and keeps one that sent it', async () => {
    // The binding keeps this deadline itself (graphql-ws's own timer is off), dropped at connection_init.
    const { url } = await bindingForTest({ schema, connectionInitWaitTimeout: 100 });
    const silent = new WebSocket(url, 'graphql-transport-ws');
    onTestFinished(() => silent.terminate());
    const closed = once(silent, 'close');
    const initialised = await initialisedSocket(url);
    const [code, reason] = (await closed) as [number, Buffer];
    expect(code).toBe(4408);
    expect(String(reason)).toBe('Connection initialisation timeout');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(initialised.socket.readyState).toBe(WebSocket.OPEN);
    expect(initialised.frames).toEqual([JSON.stringify({ type: 'connection_ack' })]);
  });

  it('dispose closes open sockets with 1001 and resolves once they have closed', async () => {
    // The binding keeps its own list of sockets (the helper's server has ws's clientTracking off).
    const { url, wsServer, dispose } = await listen();
    expect(wsServer.clients).toBeUndefined();
    const serverSides: WebSocket[] = [];
    wsServer.on('connection', (socket: WebSocket) => serverSides.push(socket));
    const clients = [await subscribe(url, 'a'), await subscribe(url, 'b')];
    await until(() => clients.every((client) => client.frames.length >= 1));
    const closed = clients.map((client) => once(client.socket, 'close'));
    await dispose();
    expect(serverSides.map((socket) => socket.readyState)).toEqual([WebSocket.CLOSED, WebSocket.CLOSED]);
    const codes = (await Promise.all(closed)).map(([code]) => code);
    expect(codes).toEqual([1001, 1001]);
  });

  it('closes every open socket with 4500 when the ws server emits an error, as graphql-ws does', async () => {
    const { url, wsServer } = await listen();
    const clients = [await subscribe(url, 'a'), await subscribe(url, 'b')];
    await until(() => clients.every((client) => client.frames.length >= 1));
    const closed = clients.map((client) => once(client.socket, 'close'));
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => logged.mockRestore());
    wsServer.emit('error', new Error('listen failed'));
    const frames = await Promise.all(closed);
    expect(frames.map(([code, reason]) => [code, String(reason)])).toEqual([
      [4500, 'listen failed'],
      [4500, 'listen failed'],
    ]);
  });

  it('finds the TCP socket it corks under every server-side WebSocket (corking never stops silently)', async () => {
    // The binding reaches into ws's internal `_socket` to cork a socket's frames into one writev; if a
    // ws upgrade renamed it, frames would still flow (one syscall each) and nothing else would fail.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const { url, wsServer } = await listen();
      const connected = once(wsServer, 'connection');
      const client = await subscribe(url, 'a');
      const [serverSide] = (await connected) as [WebSocket];
      await until(() => client.frames.length >= 6);
      const tcp = (serverSide as unknown as { _socket?: { cork?: unknown; uncork?: unknown } })._socket;
      expect(typeof tcp?.cork).toBe('function');
      expect(typeof tcp?.uncork).toBe('function');
      // The binding's own check ran at that connection and did not find ws changed.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'CorkingUnavailableWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
