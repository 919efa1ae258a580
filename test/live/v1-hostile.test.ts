/**
 * The V1 live bridge against a scripted V1 double over real sockets (test/helpers/v1-socket-double.ts),
 * for what the bundled service will not do on demand: the same event sent twice (live, and in a replay
 * nobody asked for, and in a reconnect's catch-up read) is delivered once; refusals before accept and
 * the close codes end the stream with their code; an agent server that ignores the header gets the
 * first-message auth, one too old for both the query parameter; the key is in no log line either way;
 * an agent server that never answers, and a conversation deleted during a drop, end with their codes.
 */
import { describe, expect, it } from 'vitest';
import { gatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { subscribeOverWs, wsClient } from '../helpers/graphql-ws.ts';
import {
  agentMessage,
  startV1SocketDouble,
  type V1SocketDouble,
  type V1SocketDoubleOptions,
} from '../helpers/v1-socket-double.ts';

type Json = Record<string, unknown>;
type Item = { data?: { conversationEvents?: Json } | null; errors?: Array<{ extensions?: Json }> };

async function doubleAndGateway(
  options: V1SocketDoubleOptions,
): Promise<{ double: V1SocketDouble; gateway: TestGateway }> {
  const double = await startV1SocketDouble(options);
  const gateway = await gatewayForTest({
    upstreamUrl: double.url,
    upstreamApi: 'v1',
    live: {
      idleCloseMs: 50,
      reconnect: { initialDelayMs: 20, maxDelayMs: 50, maxAttempts: 3 },
    },
  });
  return { double, gateway };
}

function subscribe(gateway: TestGateway, conversationId: string) {
  const client = wsClient(gateway.url, { connectionParams: { 'X-Session-API-Key': 'caller-key' } });
  return subscribeOverWs<Item>(client, {
    query: `subscription($id: ID!) { conversationEvents(conversationId: $id) { __typename cursor raw } }`,
    variables: { id: conversationId },
  });
}

const ids = (items: Item[]) =>
  items.map((item) => (item.data?.conversationEvents?.raw as Json | undefined)?.id);
const codes = (items: Item[]) => items.flatMap((item) => item.errors?.map((e) => e.extensions?.code) ?? []);

describe('V1 live bridge: duplicates', () => {
  it('an event sent live twice, replayed unasked, and read again by the reconnect is delivered once, in order', async () => {
    const [a, b, c, d, e] = [1, 2, 3, 4, 5].map((n) => agentMessage(`event ${n}`));
    const stored = [a, b, c, d, e] as Json[];
    const { double, gateway } = await doubleAndGateway({
      stored: () => stored,
      connections: [
        // Live a, b, then a again and b again (as a replay racing live frames would), then a drop.
        { frames: [a, b, a, b], drop: true },
        // The reconnect: a replay nobody asked for (a, b, c), then live c again, d, e.
        { frames: [a, b, c, c, d, e] },
      ] as V1SocketDoubleOptions['connections'],
    });
    const stream = subscribe(gateway, double.conversationId);
    await stream.until((items) => items.length >= 5);
    // Anything later would be a duplicate arriving late: give it the time to.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(codes(stream.items)).toEqual([]);
    expect(ids(stream.items)).toEqual(stored.map((event) => event.id));
    expect(double.handshakes).toHaveLength(2);
  });
});

describe('V1 live bridge: refusals', () => {
  const cases: Array<[string, V1SocketDoubleOptions['connections'][number], string]> = [
    ['a 403 before accept (to the header, then to the query parameter)', { refuse: 403 }, 'UNAUTHENTICATED'],
    ['close 4001', { closeWith: 4001 }, 'UNAUTHENTICATED'],
    ['close 4004', { closeWith: 4004 }, 'CONVERSATION_NOT_FOUND'],
    ['close 1013', { closeWith: 1013 }, 'UPSTREAM_TOO_MANY_CONNECTIONS'],
    ['an agent server that never upgrades (502 every time)', { refuse: 502 }, 'CONVERSATION_UNREACHABLE'],
  ];
  for (const [what, connection, code] of cases) {
    it(`${what} ends the stream with ${code}; the key is in no log line`, async () => {
      const { double, gateway } = await doubleAndGateway({ connections: [connection] });
      const stream = subscribe(gateway, double.conversationId);
      await stream.finished();
      expect(codes(stream.items)).toEqual([code]);
      expect(gateway.logs().filter((line) => line.includes(double.sessionApiKey))).toEqual([]);
      if (connection.refuse === 403) {
        expect(double.handshakes.map((h) => h.key)).toEqual(['header', 'query']);
      }
    });
  }

  it('a conversation deleted while its socket was down ends the stream with CONVERSATION_DELETED', async () => {
    const first = agentMessage('before the drop');
    let deleted = false;
    const { double, gateway } = await doubleAndGateway({
      stored: () => [first],
      deleted: () => deleted,
      connections: [{ frames: [first], drop: true }],
    });
    const stream = subscribe(gateway, double.conversationId);
    await stream.until((items) => items.length >= 1);
    deleted = true;
    await stream.finished();
    expect(ids(stream.items)).toEqual([first.id, undefined]);
    expect(codes(stream.items)).toEqual(['CONVERSATION_DELETED']);
  });
});

describe('V1 live bridge: a conversation that is still starting', () => {
  it('whose start finishes between the app server read and the start-task read is followed, not NOT_FOUND', async () => {
    const event = agentMessage('first words');
    const { double, gateway } = await doubleAndGateway({
      startsBetweenReads: true,
      stored: () => [event],
      connections: [{ frames: [event] }],
    });
    const stream = subscribe(gateway, double.conversationId);
    await stream.until((items) => items.length >= 1);
    expect(codes(stream.items)).toEqual([]);
    expect(ids(stream.items)).toEqual([event.id]);
  });
});

describe('V1 live bridge: a paused sandbox', () => {
  it('is waited for through the reconnect attempts, then ends the stream with CONVERSATION_STOPPED', async () => {
    const first = agentMessage('before the pause');
    let paused = false;
    const { double, gateway } = await doubleAndGateway({
      stored: () => [first],
      paused: () => paused,
      connections: [{ frames: [first], drop: true }],
    });
    const stream = subscribe(gateway, double.conversationId);
    await stream.until((items) => items.length >= 1);
    paused = true;
    await stream.finished();
    expect(ids(stream.items)).toEqual([first.id, undefined]);
    expect(codes(stream.items)).toEqual(['CONVERSATION_STOPPED']);
    // Paused: no socket attempt at all, only the app server asked.
    expect(double.handshakes).toHaveLength(1);
  });
});

describe('V1 live bridge: authentication', () => {
  it('an agent server that does not see the header gets the first-message auth, and keeps getting it', async () => {
    const event = agentMessage('after the auth frame');
    const { double, gateway } = await doubleAndGateway({
      auth: 'ignore-header',
      stored: () => [event],
      connections: [{ frames: [event], drop: true }, { frames: [] }],
    });
    const stream = subscribe(gateway, double.conversationId);
    await stream.until((items) => items.length >= 1);
    await expect.poll(() => double.handshakes.length, { timeout: 2_000 }).toBe(2);
    await expect.poll(() => double.authFrames, { timeout: 2_000 }).toBe(2);
    // The header the first time; once it turned out unheard, the auth frame alone.
    expect(double.handshakes.map((h) => h.key)).toEqual(['header', 'none']);
    expect(ids(stream.items)).toEqual([event.id]);
    expect(gateway.logs().filter((line) => line.includes(double.sessionApiKey))).toEqual([]);
  });

  it('an agent server too old for the header and the auth frame gets the query parameter, never logged', async () => {
    const event = agentMessage('over the query parameter');
    const { double, gateway } = await doubleAndGateway({
      auth: 'query-only',
      stored: () => [event],
      connections: [{ frames: [event] }],
    });
    const stream = subscribe(gateway, double.conversationId);
    await stream.until((items) => items.length >= 1);
    expect(codes(stream.items)).toEqual([]);
    expect(double.handshakes.map((h) => h.key)).toEqual(['header', 'query']);
    expect(gateway.logs().length).toBeGreaterThan(0);
    expect(gateway.logs().filter((line) => line.includes(double.sessionApiKey))).toEqual([]);
  });
});
