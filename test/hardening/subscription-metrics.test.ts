/**
 * Every subscription gauge comes back to 0 when nothing is open, whatever ended the subscription:
 * refused at subscribe time (bad id, rate limited, too many on one socket), left by the client
 * (`complete`), its socket closed, ended by an upstream failure, or ended by shutdown; and the
 * operation counter counts each one once. Both delivery paths: a catch-up (`fromBeginning`, its own
 * stream through envelop) and live events only (a live group's member, live-fan-out.ts), on both
 * APIs: `upstream_sockets_open` counts V0's Socket.IO sockets and V1's agent-server sockets alike.
 * Read from `GET /metrics` over real graphql-ws against the local service.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { APIS, seedConversations } from '../helpers/both-apis.ts';
import { serviceAndGatewayForTest, startTestGateway } from '../helpers/gateway.ts';
import { RawGraphqlWs } from '../helpers/graphql-ws.ts';
import { metric } from '../helpers/http.ts';
import { localServiceForTest } from '../helpers/local-service.ts';

/** The two ways a graphql-ws subscription is delivered, and how a test knows it is streaming. */
const PATHS = [
  { path: 'catch-up stream', after: ', fromBeginning: true', streamingFrom: 'first result' },
  { path: 'live group', after: '', streamingFrom: 'gauge' },
] as const;

/** Each path on each API. */
const CASES = APIS.flatMap((api) => PATHS.map((path) => ({ api, ...path })));

function subscribe(socket: RawGraphqlWs, id: string, conversationId: string, after: string): void {
  const query = `subscription E($id: ID!) { conversationEvents(conversationId: $id${after}) { cursor } }`;
  socket.send(
    JSON.stringify({ id, type: 'subscribe', payload: { query, variables: { id: conversationId } } }),
  );
}

/** The frames of one operation once it has ended (`error` or `complete`). */
async function ended(socket: RawGraphqlWs, id: string) {
  await socket.until((all) => all.some((m) => m.id === id && (m.type === 'error' || m.type === 'complete')));
  return socket.messages.filter((m) => m.id === id);
}

/** Codes of an operation's errors, from `error` frames and from errors inside `next` frames. */
function errorCodesOf(frames: RawGraphqlWs['messages']): unknown[] {
  return frames.flatMap((frame) => {
    const errors = frame.type === 'error' ? frame.payload : (frame.payload as { errors?: unknown })?.errors;
    return ((errors as Array<{ extensions?: { code?: unknown } }>) ?? []).map(
      (error) => error.extensions?.code,
    );
  });
}

describe.each(CASES)('graphql_subscriptions_open on $api ($path)', ({ api, after, streamingFrom }) => {
  /** Resolves once `count` subscriptions stream, operation `id` among them. */
  const streaming = async (socket: RawGraphqlWs, id: string, gatewayUrl: string, count: number) => {
    // A catch-up sends its history at once; a live-only one sends nothing until the agent acts.
    if (streamingFrom === 'first result')
      await socket.until((all) => all.some((m) => m.id === id && m.type === 'next'));
    await vi.waitFor(async () => expect(await metric(gatewayUrl, 'graphql_subscriptions_open')).toBe(count), {
      timeout: 5000,
      interval: 20,
    });
  };

  it('returns to 0 after refusals, complete, socket close, upstream failure and shutdown', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({
      api,
      fastLive: true,
      hardening: { rateLimit: { perSecond: 0.01, burst: 8 } },
      wsLimits: { maxSubscriptionsPerSocket: 2 },
      live: { idleCloseMs: 20, reconnect: { initialDelayMs: 20, maxDelayMs: 40, maxAttempts: 2 } },
    });
    const open = () => metric(gateway.url, 'graphql_subscriptions_open');
    const subscribes = () => metric(gateway.url, 'graphql_operations_total', { type: 'subscribe' });
    const idle = async () => {
      await vi.waitFor(async () => expect(await open()).toBe(0), { timeout: 5000, interval: 20 });
      await vi.waitFor(async () => expect(await metric(gateway.url, 'upstream_sockets_open')).toBe(0), {
        timeout: 5000,
        interval: 20,
      });
      expect(gateway.gateway.hardening.shutdown.streams).toBe(0);
      expect(gateway.gateway.liveStats().subscribers).toBe(0);
    };
    const [id] = (await seedConversations(api, service.url, 1)) as [string];
    const socket = await RawGraphqlWs.open(gateway.url);
    onTestFinished(() => socket.close());

    // Refused: a bad id (1 subscribe).
    subscribe(socket, 'bad-id', 'not a conversation id', after);
    expect(errorCodesOf(await ended(socket, 'bad-id'))).toEqual(['BAD_USER_INPUT']);
    expect(await open()).toBe(0);

    // Refused: too many on one socket (2 streaming + 1 refused before it reaches the executor).
    subscribe(socket, 'a', id, after);
    subscribe(socket, 'b', id, after);
    await streaming(socket, 'a', gateway.url, 2);
    await streaming(socket, 'b', gateway.url, 2);
    // Both share the conversation's one upstream socket (V1: its agent server's event socket).
    await vi.waitFor(async () => expect(await metric(gateway.url, 'upstream_sockets_open')).toBe(1), {
      timeout: 5000,
      interval: 20,
    });
    subscribe(socket, 'too-many', id, after);
    expect(errorCodesOf(await ended(socket, 'too-many'))).toEqual(['TOO_MANY_SUBSCRIPTIONS']);
    expect(await open()).toBe(2);

    // Ended by the client: `complete` for one, closing the socket for the other.
    socket.send('{"id":"a","type":"complete"}');
    await vi.waitFor(async () => expect(await open()).toBe(1), { timeout: 5000, interval: 20 });
    await socket.close();
    await idle();

    // Ended by an upstream failure: the service goes away, the stream ends with an error result.
    const second = await RawGraphqlWs.open(gateway.url);
    onTestFinished(() => second.close());
    subscribe(second, 'doomed', id, after);
    await streaming(second, 'doomed', gateway.url, 1);
    await service.close();
    expect(errorCodesOf(await ended(second, 'doomed'))).toEqual(['CONVERSATION_UNREACHABLE']);
    await idle();

    // Refused: rate limited (the bucket of 8 is spent by now: 1 + 2 + 1 above, then these).
    const third = await RawGraphqlWs.open(gateway.url);
    onTestFinished(() => third.close());
    const limited: unknown[] = [];
    for (let index = 0; index < 5; index++) {
      subscribe(third, `r${index}`, id, after);
      limited.push(...errorCodesOf(await ended(third, `r${index}`)));
    }
    expect(limited).toContain('RATE_LIMITED');
    await idle();
    // Every subscribe that reached the executor was counted once: bad id, a, b, doomed and the five.
    expect(await subscribes()).toBe(9);
  });

  it('returns to 0 when shutdown ends the streams', async () => {
    const service = await localServiceForTest({ api });
    const gateway = await startTestGateway({
      upstreamUrl: service.url,
      upstreamApi: api,
      fastLive: true,
      shutdownGraceMs: 2000,
    });
    onTestFinished(() => gateway.close());
    const [id] = (await seedConversations(api, service.url, 1)) as [string];
    const socket = await RawGraphqlWs.open(gateway.url);
    onTestFinished(() => socket.close());
    subscribe(socket, 's1', id, after);
    subscribe(socket, 's2', id, after);
    await streaming(socket, 's1', gateway.url, 2);
    await streaming(socket, 's2', gateway.url, 2);
    await gateway.close();
    expect(errorCodesOf(socket.messages.filter((m) => m.id === 's1'))).toEqual(['GATEWAY_SHUTTING_DOWN']);
    // /metrics is gone with the server; the registry is still readable.
    const text = (await gateway.gateway.hardening.metrics?.render()) ?? '';
    expect(text).toMatch(/^graphql_subscriptions_open 0$/m);
    expect(text).toMatch(/^graphql_operations_total\{operation="E",type="subscribe",outcome="error"\} 2$/m);
  });
});
