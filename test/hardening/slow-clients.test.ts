/**
 * Slow-client limits over real sockets, each with small settings so a test takes well under a
 * second or two: the header deadline and the whole-request deadline answer 408 REQUEST_TIMEOUT; an
 * SSE stream whose reader stops reading is cut as graphql-ws cuts a paused socket; one credential
 * holds at most MAX_STREAMS_PER_CREDENTIAL sockets + SSE streams (4429 / 429 TOO_MANY_STREAMS).
 * What streams a conversation runs on both APIs (the events come from V0's Socket.IO bridge or from
 * V1's agent-server sockets); the deadlines of requests that never reach an upstream run once.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { APIS } from '../helpers/both-apis.ts';
import { cursorSubscription, seedConversation } from '../helpers/both-apis-live.ts';
import { serviceAndGatewayForTest, type TestGateway } from '../helpers/gateway.ts';
import { initSocket } from '../helpers/graphql-ws.ts';
import { parseRawAnswer, post, rawConnection, readUntilClosed } from '../helpers/http.ts';
import { sseSubscribe } from '../helpers/sse.ts';

const EVENTS = cursorSubscription(`
  __typename cursor message
  ... on UserMessageEvent { content }
  ... on AgentMessageEvent { content }
`);

/** The raw request of an SSE subscription to a conversation's whole history (as EventSource sends it). */
function openSse(url: string, id: string): string {
  const { pathname, host } = new URL(url);
  const variables = encodeURIComponent(JSON.stringify({ id, fromBeginning: true }));
  const path = `${pathname}?query=${encodeURIComponent(EVENTS)}&variables=${variables}`;
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: text/event-stream\r\n\r\n`;
}

/**
 * Sends `request` (an unfinished one) on a raw connection and expects the 408 REQUEST_TIMEOUT answer
 * naming `deadline`, with nothing sent upstream.
 */
async function expectTimedOut(gateway: TestGateway, request: string, deadline: string) {
  const socket = await rawConnection(gateway.url);
  onTestFinished(() => {
    socket.destroy();
  });
  socket.write(request);
  const answer = parseRawAnswer(await readUntilClosed(socket));
  expect(answer.status).toBe(408);
  expect(JSON.parse(answer.body)).toEqual({
    errors: [{ message: expect.stringContaining(deadline), extensions: { code: 'REQUEST_TIMEOUT' } }],
  });
  expect(gateway.calls).toHaveLength(0);
}

describe('request deadlines (no upstream call: the API plays no part)', () => {
  it('answers 408 REQUEST_TIMEOUT when the headers do not arrive within HEADERS_TIMEOUT_MS', async () => {
    const { gateway } = await serviceAndGatewayForTest({
      transportLimits: { headersTimeoutMs: 500, requestTimeoutMs: 5_000 },
    });
    const host = new URL(gateway.url).host;
    await expectTimedOut(
      gateway,
      `POST /graphql HTTP/1.1\r\nHost: ${host}\r\nContent-Type: app`,
      'HEADERS_TIMEOUT_MS (500 ms)',
    );
  });

  it('answers 408 REQUEST_TIMEOUT when the body does not arrive within REQUEST_TIMEOUT_MS', async () => {
    const { gateway } = await serviceAndGatewayForTest({
      transportLimits: { headersTimeoutMs: 500, requestTimeoutMs: 800 },
    });
    const body = JSON.stringify({ query: '{ conversations(first: 1) { edges { cursor } } }' });
    await expectTimedOut(
      gateway,
      `POST /graphql HTTP/1.1\r\nHost: ${new URL(gateway.url).host}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      'REQUEST_TIMEOUT_MS (800 ms)',
    );
    // The gateway still answers complete requests.
    expect((await post(gateway.url, { query: '{ __typename }' })).status).toBe(200);
  });
});

describe.each(APIS)('request deadlines of streams on %s', (api) => {
  it('does not cut an answer streamed for longer than the request deadline (SSE, graphql-ws)', async () => {
    const { gateway, service } = await serviceAndGatewayForTest({
      api,
      transportLimits: { headersTimeoutMs: 1_000, requestTimeoutMs: 1_000 },
    });
    const id = await seedConversation(api, service.url);
    const abort = new AbortController();
    onTestFinished(() => abort.abort());
    const stream = sseSubscribe(gateway.url, { query: EVENTS, variables: { id } }, {}, abort.signal);
    const first = stream.next();
    const ws = await initSocket(gateway.url, {});
    onTestFinished(() => ws.socket.close());
    expect(ws.acknowledged).toBe(true);
    // Two deadlines pass while both stay open (deadlines are not much shorter here: a loaded test
    // machine must still deliver the other requests of this test within them)...
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const sent = await post(gateway.url, {
      query: 'mutation($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }',
      variables: { input: { conversationId: id, content: 'still there?' } },
    });
    expect(sent.json?.data).toEqual({ sendMessage: { __typename: 'SendMessagePayload' } });
    // ...and the stream still delivers.
    expect((await first).value).toMatchObject({
      data: { conversationEvents: { __typename: 'UserMessageEvent' } },
    });
    expect(ws.socket.readyState).toBe(ws.socket.OPEN);
  });
});

describe.each(APIS)('SSE stall cut on %s', (api) => {
  /**
   * A conversation whose stored history is ~6 MB of SSE frames, more than loopback's socket buffers
   * hold: one long first message (sendMessage allows 100,000 characters; the REST create takes more),
   * stored as the user's event and quoted back by the agent, each carrying it as `message` and `content`.
   */
  async function bigHistory(serviceUrl: string): Promise<string> {
    return seedConversation(api, serviceUrl, { message: `one ${'x'.repeat(1_500_000)}` });
  }

  it('cuts a stream whose reader stopped reading, and only that stream', async () => {
    const { gateway, service } = await serviceAndGatewayForTest({
      api,
      transportLimits: { sseStallTimeoutMs: 300 },
    });
    const id = await bigHistory(service.url);

    // A reader that reads: it receives the whole history, up to the agent's answer, and is not cut.
    const reader = await rawConnection(gateway.url);
    onTestFinished(() => {
      reader.destroy();
    });
    reader.write(openSse(gateway.url, id));
    await new Promise<void>((resolve, reject) => {
      let tail = '';
      reader.setEncoding('utf8');
      reader.on('data', (chunk: string) => {
        // Only the seam with the previous chunk is searched again: the answer is megabytes long.
        if ((tail + chunk).includes('You said: one')) resolve();
        tail = chunk.slice(-20);
      });
      reader.once('close', () => reject(new Error('the reading stream was closed')));
    });
    expect(gateway.logs().some((line) => line.includes('SSE stream cut'))).toBe(false);

    // A reader that stops after the first bytes: the replay fills the socket buffers, the response
    // waits for a drain that never comes, and the gateway cuts it.
    const socket = await rawConnection(gateway.url);
    onTestFinished(() => {
      socket.destroy();
    });
    socket.write(openSse(gateway.url, id));
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    await vi.waitFor(
      () => expect(gateway.logs().some((line) => line.includes('SSE stream cut'))).toBe(true),
      { timeout: 20_000, interval: 20 },
    );

    // Reading again, the client finds the stream ended without `complete`: it was cut, not finished.
    const rest_ = await readUntilClosed(socket, 20_000);
    expect(rest_.length).toBeGreaterThan(0);
    expect(rest_).not.toContain('event: complete');
    const cutLines = gateway.logs().filter((line) => line.includes('SSE stream cut'));
    expect(cutLines).toHaveLength(1);
  });
});

describe.each(APIS)('streams per credential on %s', (api) => {
  it('refuses a third socket or SSE stream of one credential (4429 / 429 TOO_MANY_STREAMS), not another credential’s', async () => {
    const { gateway, service } = await serviceAndGatewayForTest({
      api,
      transportLimits: { maxStreamsPerCredential: 2 },
    });
    const id = await seedConversation(api, service.url);
    const keyA = { 'X-Session-API-Key': 'key-a' };

    const first = await initSocket(gateway.url, keyA);
    onTestFinished(() => first.socket.close());
    const abort = new AbortController();
    onTestFinished(() => abort.abort());
    const sse = await fetch(gateway.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'x-session-api-key': 'key-a',
      },
      body: JSON.stringify({ query: EVENTS, variables: { id } }),
      signal: abort.signal,
    });
    expect([first.acknowledged, sse.status]).toEqual([true, 200]);

    const third = await initSocket(gateway.url, keyA);
    expect(third).toMatchObject({ acknowledged: false, closeCode: 4429 });
    expect(third.closeReason).toMatch(/^TOO_MANY_STREAMS/);
    const thirdSse = await post(
      gateway.url,
      { query: EVENTS, variables: { id } },
      { accept: 'text/event-stream', 'x-session-api-key': 'key-a' },
    );
    expect(thirdSse.status).toBe(429);
    expect(thirdSse.json?.errors?.[0]?.extensions?.code).toBe('TOO_MANY_STREAMS');
    // Plain requests of that credential are not streams and still run.
    expect(
      (await post(gateway.url, { query: '{ __typename }' }, { 'x-session-api-key': 'key-a' })).status,
    ).toBe(200);

    // Another credential has its own count; an empty key is no credential, counted apart from key-a.
    for (const params of [{ 'X-Session-API-Key': 'key-b' }, { 'X-Session-API-Key': '' }]) {
      const other = await initSocket(gateway.url, params);
      onTestFinished(() => other.socket.close());
      expect(other.acknowledged, JSON.stringify(params)).toBe(true);
    }

    // Closing a socket or a stream frees its slot.
    first.socket.close();
    abort.abort();
    const again: Array<Awaited<ReturnType<typeof initSocket>>> = [];
    await vi.waitFor(
      async () => {
        const attempt = await initSocket(gateway.url, keyA);
        onTestFinished(() => attempt.socket.close());
        if (attempt.acknowledged) again.push(attempt);
        expect(again).toHaveLength(1);
      },
      { timeout: 5000, interval: 20 },
    );
    const second = await initSocket(gateway.url, keyA);
    onTestFinished(() => second.socket.close());
    expect(second.acknowledged).toBe(true);
    // The log never names a key.
    expect(gateway.logs().join('\n')).not.toContain('key-a');
  });
});
