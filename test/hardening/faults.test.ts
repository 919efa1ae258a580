/**
 * Fault injection: a misbehaving upstream on 127.0.0.1 (slow answers, resets, 5xx, invalid JSON,
 * oversized bodies) and the real local service going away under a live subscription. Every fault
 * becomes a coded error, the gateway keeps serving, memory stays bounded, and it recovers when the
 * upstream does.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { Collector } from '../helpers/collector.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { wsClient } from '../helpers/graphql-ws.ts';
import { codes, post } from '../helpers/http.ts';
import { rest, startTestLocalService, tempDataDirForTest } from '../helpers/local-service.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';

const LIST = 'query List { conversations(first: 2) { edges { node { id } } } }';
const EMPTY_PAGE = { results: [], next_page_id: null };

type Fault = 'slow' | 'reset' | '500' | '503' | 'invalid-json' | 'oversized' | 'healthy';

/** Streams `bytes` of a JSON-looking body with backpressure; records how much was actually written. */
function streamHuge(res: ServerResponse, bytes: number, written: { bytes: number }) {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const pump = () => {
    while (written.bytes < bytes) {
      written.bytes += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

describe('a misbehaving upstream', () => {
  it('maps every fault to a coded error, never 5xx to the client, and recovers', async () => {
    let fault: Fault = 'healthy';
    const written = { bytes: 0 };
    const upstream = await misbehavingUpstreamForTest((_req, res) => {
      switch (fault) {
        case 'slow':
          setTimeout(() => sendJson(res, 200, EMPTY_PAGE), 1500).unref();
          return;
        case 'reset':
          res.socket?.destroy();
          return;
        case '500':
          return sendJson(res, 500, { detail: 'Traceback: session_api_key=sk-upstream-secret' });
        case '503':
          return sendJson(res, 503, { detail: 'down' });
        case 'invalid-json':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"results": [');
          return;
        case 'oversized':
          return streamHuge(res, 64 * 1024 * 1024, written);
        default:
          return sendJson(res, 200, EMPTY_PAGE);
      }
    });
    const gateway = await gatewayForTest({
      upstreamUrl: upstream.url,
      upstreamTimeoutMs: 300,
      upstream: { retries: 0, circuitBreaker: false, maxResponseBytes: 256 * 1024 },
      hardening: { rateLimit: false },
    });
    const expected: Record<Exclude<Fault, 'healthy'>, string> = {
      slow: 'UPSTREAM_TIMEOUT',
      reset: 'UPSTREAM_UNAVAILABLE',
      '500': 'UPSTREAM_ERROR',
      '503': 'UPSTREAM_UNAVAILABLE',
      'invalid-json': 'UPSTREAM_ERROR',
      oversized: 'UPSTREAM_ERROR',
    };
    const heapBefore = process.memoryUsage().heapUsed;
    for (const [name, code] of Object.entries(expected)) {
      fault = name as Fault;
      for (let i = 0; i < 3; i++) {
        const answer = await post(gateway.url, { query: LIST });
        expect({ fault: name, status: answer.status, codes: codes(answer) }).toEqual({
          fault: name,
          status: 200,
          codes: [code],
        });
        expect(answer.json?.data).toEqual({ conversations: null });
        expect(answer.text).not.toContain('sk-upstream-secret');
        expect(answer.text).not.toContain('Traceback');
      }
    }
    // The oversized answers were cut off, not buffered: far less than 3 x 64 MiB was ever sent.
    expect(written.bytes).toBeLessThan(3 * 16 * 1024 * 1024);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);

    fault = 'healthy';
    const recovered = await post(gateway.url, { query: LIST });
    expect(recovered.json).toEqual({ data: { conversations: { edges: [] } } });
    const health = await fetch(new URL('/health', gateway.url));
    expect(health.status).toBe(200);
    expect(gateway.logs().join('\n')).not.toContain('sk-upstream-secret');
  });
});

describe('the upstream going away under live subscriptions', () => {
  it('ends the stream with a coded error, keeps serving, and works again once the upstream is back', async () => {
    const dataDir = tempDataDirForTest();
    const first = await startTestLocalService({ dataDir });
    let firstOpen = true;
    onTestFinished(async () => {
      if (firstOpen) await first.close({ keepDataDir: true });
    });
    const created = await rest<{ conversation_id: string }>(first.url, '/api/conversations', {
      method: 'POST',
      body: { initial_user_msg: 'hello' },
    });
    const id = created.body.conversation_id;
    const gateway = await gatewayForTest({
      upstreamUrl: first.url,
      fastLive: true,
      live: { reconnect: { initialDelayMs: 20, maxDelayMs: 50, maxAttempts: 3 } },
      upstream: { circuitBreaker: { failureThreshold: 5, resetTimeoutMs: 200 } },
    });
    const ws = wsClient(gateway.url);
    const query =
      'subscription Events($id: ID!) { conversationEvents(conversationId: $id, afterEventId: -1) { __typename eventId } }';
    const stream = new Collector(ws.iterate({ query, variables: { id } }));
    await stream.until((items) => items.length > 0);

    // The upstream drops every socket mid-stream and does not come back in time.
    firstOpen = false;
    await first.close({ keepDataDir: true });
    await vi.waitFor(() => expect(stream.ended).toBe(true), { timeout: 8000, interval: 20 });
    const last = stream.items.at(-1) as { errors?: Array<{ extensions?: { code?: string } }> } | undefined;
    const code =
      last?.errors?.[0]?.extensions?.code ??
      (stream.error as Array<{ extensions?: { code?: string } }> | null)?.[0]?.extensions?.code;
    expect(code).toMatch(/^[A-Z_]+$/);
    expect((await fetch(new URL('/health', gateway.url))).status).toBe(200);

    // The upstream returns on the same port with the same data: new subscriptions work again.
    const second = await startTestLocalService({ dataDir, port: first.port });
    onTestFinished(() => second.close({ keepDataDir: true }));
    expect(second.port).toBe(first.port);
    // The reconnect attempts opened the circuit; after its cool-down one probe goes through and the
    // next subscription works again.
    let again = new Collector(ws.iterate({ query, variables: { id } }));
    await vi.waitFor(
      async () => {
        await again.until((items) => items.length > 0 || again.ended, 3000).catch(() => {});
        if (again.items.some((item) => (item as { data?: unknown }).data)) return;
        again = new Collector(ws.iterate({ query, variables: { id } }));
        throw new Error('the new subscription got no event yet');
      },
      { timeout: 8000, interval: 20 },
    );
    expect(again.items[0]).toMatchObject({ data: { conversationEvents: { eventId: expect.any(Number) } } });
  });
});
