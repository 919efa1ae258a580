/**
 * Per-credential rate limit, circuit breaker, bounded upstream concurrency and the operation
 * deadline: units (the breaker's with an injected clock), then the real gateway on both APIs against a
 * misbehaving upstream (127.0.0.1, port 0, answering each API's own list) or the real local service;
 * and, V1 only, an agent server that is down while its app server answers (each agent-server origin
 * has its own breaker: one sandbox failing must not open the app server's circuit).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { budgetWindow, RateLimiter } from '../../src/gateway/protection/rate-limit.ts';
import { CircuitBreaker, ConcurrencyGate, GateRefusal } from '../../src/upstream/circuit-breaker.ts';
import { APIS, searchPath } from '../helpers/both-apis.ts';
import { emptyPage, runningAppConversation } from '../helpers/both-apis-hardening.ts';
import { gatewayForTest, serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { startHostileUpstream } from '../helpers/hostile-upstream.ts';
import { codes, metric, post } from '../helpers/http.ts';
import { stopServer } from '../helpers/loopback.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';

const LIST = 'query List { conversations(first: 2) { edges { node { id } } } }';

describe('RateLimiter', () => {
  it('turns (rate, burst) into a window that never grants more than the rate', () => {
    expect(budgetWindow(20)).toEqual({ points: 40, duration: 2 });
    expect(budgetWindow(2, 3)).toEqual({ points: 3, duration: 2 });
    expect(budgetWindow(0.2, 3)).toEqual({ points: 3, duration: 15 });
    expect(budgetWindow(50, 50)).toEqual({ points: 50, duration: 1 });
  });

  it('allows the burst, then refuses with the wait until the window ends', async () => {
    const limiter = new RateLimiter({ perSecond: 2, burst: 3 });
    const key = limiter.keyOf({ kind: 'session-api-key', key: 'secret-key-a' });
    const verdicts = [];
    for (let i = 0; i < 4; i++) verdicts.push(await limiter.take(key));
    expect(verdicts.map((verdict) => verdict.allowed)).toEqual([true, true, true, false]);
    expect(verdicts[3]).toEqual({ allowed: false, retryAfterSeconds: 2 });
    // Another caller has its own budget.
    expect((await limiter.take(limiter.keyOf({ kind: 'bearer', token: 'other' }))).allowed).toBe(true);
  });

  it('keys by a salted hash, never the credential; a shared salt gives the same key in every process', () => {
    const limiter = new RateLimiter({ perSecond: 1 });
    const a = limiter.keyOf({ kind: 'session-api-key', key: 'secret-key-a' });
    const bearer = limiter.keyOf({ kind: 'bearer', token: 'secret-key-a' });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toContain('secret');
    expect(bearer).not.toBe(a);
    expect(
      new RateLimiter({ perSecond: 1 }).keyOf({ kind: 'session-api-key', key: 'secret-key-a' }),
    ).not.toBe(a);
    const shared = (salt: string) =>
      new RateLimiter({ perSecond: 1, salt }).keyOf({ kind: 'session-api-key', key: 'secret-key-a' });
    expect(shared('s1')).toBe(shared('s1'));
    expect(shared('s1')).not.toBe(shared('s2'));
  });

  it('lets the operation through when its store fails without a fallback', async () => {
    const limiter = new RateLimiter({
      perSecond: 1,
      backend: { consume: () => Promise.reject(new Error('store down')) },
    });
    expect(await limiter.take('k')).toEqual({ allowed: true });
    expect(limiter.failedOpen).toBe(1);
  });
});

describe.each(APIS)('rate limit at the gateway on %s', (api) => {
  it('refuses a credential past its budget with 429 RATE_LIMITED and Retry-After; other credentials are unaffected', async () => {
    const { gateway } = await serviceAndGatewayForTest({
      api,
      service: { sessionApiKeys: ['key-a', 'key-b'] },
      hardening: { rateLimit: { perSecond: 0.2, burst: 3 } },
    });
    const asA = () => post(gateway.url, { query: LIST }, { 'x-session-api-key': 'key-a' });
    for (let i = 0; i < 3; i++) expect((await asA()).status).toBe(200);
    const limited = await asA();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.json?.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterSeconds: expect.any(Number),
    });
    expect(limited.text).not.toContain('key-a');
    const callsBefore = gateway.calls.length;
    expect((await asA()).status).toBe(429);
    expect(gateway.calls.length).toBe(callsBefore); // refused before any upstream call
    const asB = await post(gateway.url, { query: LIST }, { 'x-session-api-key': 'key-b' });
    expect(asB.status).toBe(200);
    expect(gateway.logs().join('\n')).not.toMatch(/key-a|key-b/);
  });
});

describe('CircuitBreaker and ConcurrencyGate', () => {
  it('opens after the threshold, refuses while open, admits one probe after the cool-down, closes on success', () => {
    let now = 0;
    const states: string[] = [];
    const breaker = new CircuitBreaker({
      failureThreshold: 2,
      resetTimeoutMs: 1000,
      now: () => now,
      onStateChange: (s) => states.push(s),
    });
    breaker.record('failure', false);
    expect(breaker.state).toBe('closed');
    breaker.record('failure', false);
    expect(breaker.state).toBe('open');
    expect(breaker.admit()).toEqual({ admitted: false, retryAfterMs: 1000 });
    now += 1000;
    expect(breaker.admit()).toEqual({ admitted: true, probe: true });
    expect(breaker.admit().admitted).toBe(false); // only one probe
    breaker.record('failure', true);
    expect(breaker.state).toBe('open'); // a failed probe re-opens at once
    now += 1000;
    const probe = breaker.admit();
    expect(probe).toEqual({ admitted: true, probe: true });
    breaker.record('success', true);
    expect(breaker.state).toBe('closed');
    expect(states).toEqual(['open', 'half-open', 'open', 'half-open', 'closed']);
  });

  it('the gate bounds calls in flight and waiting, and a waiter can be aborted', async () => {
    const gate = new ConcurrencyGate({ maxConcurrent: 1, maxQueued: 1 });
    await gate.acquire();
    const abort = new AbortController();
    const waiting = gate.acquire(abort.signal);
    await expect(gate.acquire()).rejects.toEqual(new GateRefusal('queue-full'));
    abort.abort();
    await expect(waiting).rejects.toEqual(new GateRefusal('aborted'));
    expect(gate.queued).toBe(0);
    const next = gate.acquire();
    gate.release();
    await next;
    gate.release();
    expect(gate.active).toBe(0);
  });

  it('tryAcquire takes a free slot at once, and none while full, aborted or handed to a waiter', async () => {
    const gate = new ConcurrencyGate({ maxConcurrent: 1, maxQueued: 1 });
    const aborted = new AbortController();
    aborted.abort();
    expect(gate.tryAcquire(aborted.signal)).toBe(false);
    await expect(gate.acquire(aborted.signal)).rejects.toEqual(new GateRefusal('aborted'));
    expect(gate.active).toBe(0);
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(false);
    expect(gate.queued).toBe(0); // a refused tryAcquire never queues
    const waiting = gate.acquire();
    gate.release();
    // Handed over, not freed: a newcomer in the same turn finds nothing, the waiter gets it.
    expect(gate.tryAcquire()).toBe(false);
    await waiting;
    expect(gate.active).toBe(1);
    gate.release();
    expect(gate.active).toBe(0);
  });
});

describe.each(APIS)('circuit breaker at the gateway on %s', (api) => {
  it('fails fast with CIRCUIT_OPEN while the upstream fails, probes after the cool-down and recovers', async () => {
    let healthy = false;
    const upstream = await misbehavingUpstreamForTest((_req, res) => {
      if (healthy) sendJson(res, 200, emptyPage(api));
      else sendJson(res, 500, { detail: 'boom' });
    });
    // The breaker's clock is the test's: the circuit stays open until the test moves it on.
    let now = 0;
    const gateway = await gatewayForTest({
      upstreamUrl: upstream.url,
      upstreamApi: api,
      upstream: { retries: 0, circuitBreaker: { failureThreshold: 3, resetTimeoutMs: 300, now: () => now } },
    });
    for (let i = 0; i < 3; i++)
      expect(codes(await post(gateway.url, { query: LIST }))).toEqual(['UPSTREAM_ERROR']);
    const seen = upstream.requests.length;
    const open = await post(gateway.url, { query: LIST });
    expect(open.json?.errors?.[0]?.extensions).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      reason: 'CIRCUIT_OPEN',
      retryAfterSeconds: 1,
    });
    expect(upstream.requests.length).toBe(seen); // no call while open
    expect(await metric(gateway.url, 'upstream_circuit_state')).toBe(2); // open

    healthy = true;
    now += 300;
    expect((await post(gateway.url, { query: LIST })).json?.errors).toBeUndefined();
    expect(upstream.requests.length).toBe(seen + 1); // exactly one probe, then closed
    expect((await post(gateway.url, { query: LIST })).json?.data).toEqual({ conversations: { edges: [] } });
    // Every call was the API's own search: the breaker guards the V1 app server as it does V0's server.
    expect(new Set(upstream.requests.map((request) => request.path.split('?')[0]))).toEqual(
      new Set([searchPath(api)]),
    );
  });

  it('a 4xx is a healthy upstream: it never opens the circuit', async () => {
    const upstream = await misbehavingUpstreamForTest((_req, res) => sendJson(res, 401, { detail: 'no' }));
    const gateway = await gatewayForTest({
      upstreamUrl: upstream.url,
      upstreamApi: api,
      upstream: { retries: 0, circuitBreaker: { failureThreshold: 2 } },
    });
    for (let i = 0; i < 4; i++)
      expect(codes(await post(gateway.url, { query: LIST }))).toEqual(['UNAUTHENTICATED']);
    expect(upstream.requests).toHaveLength(4);
  });
});

describe('a V1 agent server that is down while its app server answers (V1 only: V0 has one server)', () => {
  it("opens that agent server's circuit only: the app server and other sandboxes keep answering; it recovers", async () => {
    const [down, healthy] = ['4d1c0b9ee5f34c6a9d2b7f1e8a0c3b21', '7e2a5c8f01d94b3e9a6c2d8f4b1e0a57'] as const;
    const SANDBOX_KEY = 'sandbox-key-hardening-9Qw2Er4Ty6Ui8Op0';
    const noEvents = (_req: IncomingMessage, res: ServerResponse) =>
      sendJson(res, 200, { items: [], next_page_id: null });
    // The first sandbox's agent server: its port is closed (connections refused) until it comes back.
    const first = await misbehavingUpstreamForTest(noEvents);
    const port = Number(new URL(first.url).port);
    await first.close();
    const other = await misbehavingUpstreamForTest(noEvents);
    const app = await startHostileUpstream();
    onTestFinished(() => app.close());
    const records = {
      [down]: runningAppConversation(down, first.url, SANDBOX_KEY),
      [healthy]: runningAppConversation(healthy, other.url, 'sandbox-key-other'),
    };
    app.on('GET', '/api/v1/app-conversations', (request) => ({
      json: request.query.getAll('ids').map((id) => records[id as keyof typeof records] ?? null),
    }));
    app.on('GET', '/api/v1/app-conversations/search', {
      json: { items: Object.values(records), next_page_id: null },
    });
    // The breakers' clock is the test's: the circuit stays open until the test moves it on.
    let now = 0;
    const gateway = await gatewayForTest({
      upstreamUrl: app.url,
      upstreamApi: 'v1',
      upstream: { retries: 0, circuitBreaker: { failureThreshold: 2, resetTimeoutMs: 1000, now: () => now } },
    });
    const HISTORY = `query($id: ID!) { conversation(id: $id) { conversationId status events(first: 5) { edges { cursor } } } }`;
    const history = async (id: string) =>
      (await post(gateway.url, { query: HISTORY, variables: { id } })).json;
    const unavailable = (extensions: Record<string, unknown>) => ({
      data: { conversation: { conversationId: down, status: 'RUNNING', events: null } },
      errors: [expect.objectContaining({ path: ['conversation', 'events'], extensions })],
    });

    // Refused twice: the history field is null with its code, the conversation itself still reads.
    for (let i = 0; i < 2; i++)
      expect(await history(down)).toEqual(unavailable({ code: 'UPSTREAM_UNAVAILABLE' }));
    // Then that agent server's circuit is open: no call goes to it, whatever the operation.
    expect(await history(down)).toEqual(
      unavailable({ code: 'UPSTREAM_UNAVAILABLE', reason: 'CIRCUIT_OPEN', retryAfterSeconds: 1 }),
    );
    const sent = await post(gateway.url, {
      query: `mutation($id: ID!) { sendMessage(input: { conversationId: $id, content: "hello?" }) { __typename } }`,
      variables: { id: down },
    });
    expect(sent.json?.errors?.map((error) => error.extensions)).toEqual([
      { code: 'UPSTREAM_UNAVAILABLE', reason: 'CIRCUIT_OPEN', retryAfterSeconds: 1 },
    ]);
    // The app server's circuit stays closed, and another sandbox's agent server answers as before.
    expect(await history(healthy)).toEqual({
      data: { conversation: { conversationId: healthy, status: 'RUNNING', events: { edges: [] } } },
    });
    const listed = await post(gateway.url, { query: LIST });
    expect(listed.json).toEqual({
      data: {
        conversations: {
          edges: [{ node: { id: expect.any(String) } }, { node: { id: expect.any(String) } }],
        },
      },
    });
    expect(await metric(gateway.url, 'upstream_circuit_state')).toBe(0);

    // The agent server comes back on its port: after the cool-down, one probe closes its circuit.
    const back = createServer(noEvents);
    await new Promise<void>((resolve, reject) => {
      back.once('error', reject);
      back.listen(port, '127.0.0.1', resolve);
    });
    onTestFinished(() => stopServer(back));
    now += 1000;
    expect(await history(down)).toEqual({
      data: { conversation: { conversationId: down, status: 'RUNNING', events: { edges: [] } } },
    });
    expect(gateway.logs().filter((line) => line.includes(SANDBOX_KEY))).toEqual([]);
  });
});

describe.each(APIS)('bounded concurrency and the operation deadline on %s', (api) => {
  it('queues calls beyond the bound, refuses beyond the queue with GATEWAY_OVERLOADED, and recovers', async () => {
    const held: Array<() => void> = [];
    const upstream = await misbehavingUpstreamForTest((_req, res) =>
      held.push(() => sendJson(res, 200, emptyPage(api))),
    );
    const gateway = await gatewayForTest({
      upstreamUrl: upstream.url,
      upstreamApi: api,
      // The shared gate itself: one caller here, so its per-credential share (fair-share.ts) is off.
      upstream: { retries: 0, maxConcurrent: 1, maxQueued: 1, concurrencyPerCredential: 0 },
      hardening: { rateLimit: false },
    });
    const first = post(gateway.url, { query: LIST });
    await vi.waitFor(() => expect(held.length).toBe(1), { timeout: 5000, interval: 20 });
    const second = post(gateway.url, { query: LIST });
    let queued = 0;
    await vi.waitFor(
      async () => {
        queued = await metric(gateway.url, 'upstream_requests_queued');
        expect(queued).toBe(1);
      },
      { timeout: 5000, interval: 20 },
    );
    const third = await post(gateway.url, { query: LIST });
    expect(third.json?.errors?.[0]?.extensions).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      reason: 'GATEWAY_OVERLOADED',
    });
    expect(upstream.requests).toHaveLength(1);
    held.shift()?.();
    expect((await first).json?.errors).toBeUndefined();
    await vi.waitFor(() => expect(held.length).toBe(1), { timeout: 5000, interval: 20 });
    held.shift()?.();
    expect((await second).json?.errors).toBeUndefined();
    expect(await metric(gateway.url, 'upstream_requests_in_flight')).toBe(0);
    expect(await metric(gateway.url, 'upstream_requests_queued')).toBe(0);
  });

  it('ends an operation at its deadline with OPERATION_TIMEOUT and aborts its upstream call', async () => {
    const upstream = await misbehavingUpstreamForTest(() => {}); // never answers
    const gateway = await gatewayForTest({
      upstreamUrl: upstream.url,
      upstreamApi: api,
      upstream: { retries: 0 },
      hardening: { operationTimeoutMs: 150 },
    });
    const answer = await post(gateway.url, { query: LIST });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      data: { conversations: null },
      errors: [{ extensions: { code: 'OPERATION_TIMEOUT' }, path: ['conversations'] }],
    });
    await vi.waitFor(() => expect(upstream.abortedRequests).toBe(1), { timeout: 5000, interval: 20 });
    // The breaker does not count the deadline against the upstream.
    expect(await metric(gateway.url, 'upstream_circuit_state')).toBe(0);
  });

  it('ends an operation at its deadline while it waits for a retry (Retry-After) with OPERATION_TIMEOUT', async () => {
    // 503 with Retry-After: 1 s: the client waits (node:timers/promises with the operation's signal).
    const upstream = await misbehavingUpstreamForTest((_req, res) =>
      sendJson(res, 503, { detail: 'busy' }, { 'retry-after': '1' }),
    );
    const gateway = await gatewayForTest({
      upstreamUrl: upstream.url,
      upstreamApi: api,
      hardening: { operationTimeoutMs: 150 },
    });
    const answer = await post(gateway.url, { query: LIST });
    expect(answer.json).toMatchObject({
      data: { conversations: null },
      errors: [{ extensions: { code: 'OPERATION_TIMEOUT' }, path: ['conversations'] }],
    });
    // The wait was cut by the deadline (a signal the timer could not use would have failed the wait
    // at once with REQUEST_CANCELLED); the retry never went out.
    expect(upstream.requests).toHaveLength(1);
  });
});
