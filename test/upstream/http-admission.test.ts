/**
 * The client's admission of each attempt (src/upstream/http.ts) against a real HTTP server on port 0:
 * the caller's share and the shared gate are taken at once when they have room and queued when not,
 * and every way through (sent, queued then sent, refused by a full queue, aborted while queued or
 * before, refused by an open circuit, retried) gives both back and tells the observers exactly once
 * per attempt. The share and the gate on their own are in test/hardening/fair-share.test.ts and
 * test/hardening/resilience.test.ts.
 */
import type { ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { UpstreamCredentials } from '../../src/upstream/credentials.ts';
import { UpstreamError } from '../../src/upstream/failures.ts';
import {
  type UpstreamAttemptOutcome,
  type UpstreamCallInfo,
  UpstreamClient,
  type UpstreamClientOptions,
} from '../../src/upstream/http.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';

const alice: UpstreamCredentials = { kind: 'session-api-key', key: 'alice-key' };
const bob: UpstreamCredentials = { kind: 'bearer', token: 'bob-token' };
const carol: UpstreamCredentials = { kind: 'access-token', token: 'carol-token' };

/** An upstream holding every request until the test answers it (by path), and a client to it. */
async function heldUpstream(options: Omit<UpstreamClientOptions, 'baseUrl'> = {}) {
  const held = new Map<string, ServerResponse>();
  const upstream = await misbehavingUpstreamForTest((req, res) => {
    held.set(req.url ?? '', res);
  });
  const calls: UpstreamCallInfo[] = [];
  const outcomes: Array<{ info: UpstreamCallInfo; outcome: UpstreamAttemptOutcome }> = [];
  const client = new UpstreamClient({
    baseUrl: upstream.url,
    retries: 0,
    onCall: (info) => calls.push(info),
    onAttempt: (info) => (outcome) => outcomes.push({ info, outcome }),
    ...options,
  });
  onTestFinished(() => client.close());
  const sent = () => upstream.requests.map((request) => request.path);
  return {
    client,
    calls,
    outcomes,
    sent,
    /** Resolves once the upstream has seen `path`. */
    arrived: (path: string) =>
      vi.waitFor(() => expect(sent()).toContain(path), { timeout: 5000, interval: 5 }),
    answer(path: string, status = 200) {
      const res = held.get(path);
      if (!res) throw new Error(`${path} was not sent`);
      held.delete(path);
      sendJson(res, status, { path });
    },
    get: (path: string, credentials: UpstreamCredentials, signal?: AbortSignal) =>
      client.request<{ path: string }>({ method: 'GET', path, credentials, signal }),
  };
}

/** The coded error a call failed with, with its extensions. */
async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return (error as UpstreamError).extensions;
}

/** A few turns of the event loop: time enough for a call that could go out to reach the server. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('UpstreamClient admission', () => {
  it('sends an uncontended call at once, tells each observer once, and gives share and slot back', async () => {
    const up = await heldUpstream({ concurrencyPerCredential: 1, maxConcurrent: 1 });
    const pending = up.get('/one', alice);
    await up.arrived('/one');
    expect(up.client.load).toEqual({ active: 1, queued: 0 });
    up.answer('/one');
    await expect(pending).resolves.toEqual({ path: '/one' });
    expect(up.calls).toEqual([{ method: 'GET', path: '/one', attempt: 1 }]);
    expect(up.outcomes).toStrictEqual([
      { info: { method: 'GET', path: '/one', attempt: 1 }, outcome: { status: 200 } },
    ]);
    expect(up.client.load).toEqual({ active: 0, queued: 0 });
    // Both bounds are 1: had either slot been kept, this would wait for ever.
    const next = up.get('/two', alice);
    await up.arrived('/two');
    up.answer('/two');
    await expect(next).resolves.toEqual({ path: '/two' });
  });

  it("queues a credential's calls past its share in order, refuses past its queue; others go at once", async () => {
    const up = await heldUpstream({ concurrencyPerCredential: 1, maxQueued: 2 });
    const first = up.get('/a1', alice);
    await up.arrived('/a1');
    const second = up.get('/a2', alice);
    const third = up.get('/a3', alice);
    expect(await failure(up.get('/a4', alice))).toEqual({
      code: 'UPSTREAM_UNAVAILABLE',
      reason: 'GATEWAY_OVERLOADED',
      retryAfterSeconds: 1,
    });
    const other = up.get('/b1', bob);
    await up.arrived('/b1');
    await settle();
    expect(up.sent()).toEqual(['/a1', '/b1']);
    // Waiting for the share holds no slot of the gate.
    expect(up.client.load).toEqual({ active: 2, queued: 0 });

    up.answer('/a1');
    await up.arrived('/a2');
    await settle();
    expect(up.sent()).toEqual(['/a1', '/b1', '/a2']);
    up.answer('/a2');
    await up.arrived('/a3');
    up.answer('/a3');
    up.answer('/b1');
    await expect(Promise.all([first, second, third, other])).resolves.toHaveLength(4);
    // Only sent calls reached the observers, each once.
    expect(up.calls.map((call) => call.path)).toEqual(['/a1', '/b1', '/a2', '/a3']);
    expect(up.outcomes.map(({ info }) => info.path).sort()).toEqual(['/a1', '/a2', '/a3', '/b1']);
    expect(up.client.load).toEqual({ active: 0, queued: 0 });
  });

  it('a call aborted while waiting for its share is never sent and takes no slot', async () => {
    const up = await heldUpstream({ concurrencyPerCredential: 1 });
    const first = up.get('/a1', alice);
    await up.arrived('/a1');
    const controller = new AbortController();
    const waiting = up.get('/a2', alice, controller.signal);
    const after = up.get('/a3', alice);
    await settle();
    controller.abort();
    expect(await failure(waiting)).toEqual({ code: 'REQUEST_CANCELLED' });
    up.answer('/a1');
    await up.arrived('/a3');
    up.answer('/a3');
    await Promise.all([first, after]);
    expect(up.sent()).toEqual(['/a1', '/a3']);
    expect(up.calls.map((call) => call.path)).toEqual(['/a1', '/a3']);
  });

  it('queues calls past the gate, refuses past its queue, cancels a waiter; the share is given back each time', async () => {
    // Each caller has its own share of one: every refusal below must give it back, or its next call waits.
    const up = await heldUpstream({ maxConcurrent: 1, maxQueued: 1, concurrencyPerCredential: 1 });
    const first = up.get('/a1', alice);
    await up.arrived('/a1');
    const controller = new AbortController();
    const cancelled = up.get('/b1', bob, controller.signal);
    expect(up.client.load).toEqual({ active: 1, queued: 1 });
    expect(await failure(up.get('/c1', carol))).toEqual({
      code: 'UPSTREAM_UNAVAILABLE',
      reason: 'GATEWAY_OVERLOADED',
      retryAfterSeconds: 1,
    });
    controller.abort(new UpstreamError('OPERATION_TIMEOUT'));
    expect(await failure(cancelled)).toEqual({ code: 'OPERATION_TIMEOUT' });
    expect(up.client.load).toEqual({ active: 1, queued: 0 });
    const queuedBob = up.get('/b2', bob);
    await settle();
    expect(up.sent()).toEqual(['/a1']);
    up.answer('/a1');
    await up.arrived('/b2');
    const queuedCarol = up.get('/c2', carol);
    await settle();
    expect(up.sent()).toEqual(['/a1', '/b2']);
    up.answer('/b2');
    await up.arrived('/c2');
    up.answer('/c2');
    await Promise.all([first, queuedBob, queuedCarol]);
    expect(up.sent()).toEqual(['/a1', '/b2', '/c2']);
    expect(up.calls.map((call) => call.path)).toEqual(['/a1', '/b2', '/c2']);
    expect(up.client.load).toEqual({ active: 0, queued: 0 });
  });

  it('never sends a call whose signal aborted before it started, though share and gate have room', async () => {
    const up = await heldUpstream({ maxConcurrent: 1, concurrencyPerCredential: 1 });
    const controller = new AbortController();
    controller.abort();
    expect(await failure(up.get('/gone', alice, controller.signal))).toEqual({ code: 'REQUEST_CANCELLED' });
    expect(up.calls).toEqual([]);
    expect(up.outcomes).toEqual([]);
    expect(up.client.load).toEqual({ active: 0, queued: 0 });
    const next = up.get('/next', alice);
    await up.arrived('/next');
    up.answer('/next');
    await next;
    expect(up.sent()).toEqual(['/next']);
  });
});

describe('UpstreamClient observers and the breaker', () => {
  it('tells each attempt of a retried read once, with its outcome', async () => {
    let seen = 0;
    const upstream = await misbehavingUpstreamForTest((_req, res) => {
      seen++;
      if (seen === 1) sendJson(res, 503, { detail: 'busy' });
      else if (seen === 2) res.destroy();
      else sendJson(res, 200, { ok: true });
    });
    const calls: UpstreamCallInfo[] = [];
    const outcomes: UpstreamAttemptOutcome[] = [];
    const client = new UpstreamClient({
      baseUrl: upstream.url,
      retryBaseDelayMs: 1,
      onCall: (info) => calls.push(info),
      onAttempt: () => (outcome) => outcomes.push(outcome),
    });
    onTestFinished(() => client.close());
    await expect(client.request({ method: 'GET', path: '/r', credentials: alice })).resolves.toEqual({
      ok: true,
    });
    expect(calls).toEqual([1, 2, 3].map((attempt) => ({ method: 'GET', path: '/r', attempt })));
    // No key for what an attempt did not have (a status without an answer, a code on success).
    expect(outcomes).toStrictEqual([
      { status: 503, code: 'UPSTREAM_UNAVAILABLE' },
      { code: 'UPSTREAM_UNAVAILABLE' },
      { status: 200 },
    ]);
    expect(client.load).toEqual({ active: 0, queued: 0 });
  });

  it('an answer that fails after its headers reports both its status and its code', async () => {
    const up = await heldUpstream();
    const pending = up.get('/bad', alice);
    await up.arrived('/bad');
    up.answer('/bad', 404);
    expect(await failure(pending)).toMatchObject({ code: 'UPSTREAM_ERROR', status: 404 });
    const upstream = await misbehavingUpstreamForTest((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{not json');
    });
    const outcomes: UpstreamAttemptOutcome[] = [];
    const client = new UpstreamClient({
      baseUrl: upstream.url,
      onAttempt: () => (outcome) => outcomes.push(outcome),
    });
    onTestFinished(() => client.close());
    expect(await failure(client.request({ method: 'GET', path: '/x', credentials: alice }))).toMatchObject({
      code: 'UPSTREAM_ERROR',
      status: 200,
    });
    expect(outcomes).toStrictEqual([{ status: 200, code: 'UPSTREAM_ERROR' }]);
    expect(up.outcomes.map(({ outcome }) => outcome)).toStrictEqual([
      { status: 404, code: 'UPSTREAM_ERROR' },
    ]);
  });

  it('an open circuit refuses before any observer, and gives share and slot back', async () => {
    const upstream = await misbehavingUpstreamForTest((_req, res) => sendJson(res, 500, { detail: 'boom' }));
    const calls: UpstreamCallInfo[] = [];
    const client = new UpstreamClient({
      baseUrl: upstream.url,
      retries: 0,
      maxConcurrent: 1,
      concurrencyPerCredential: 1,
      circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 60_000 },
      onCall: (info) => calls.push(info),
    });
    onTestFinished(() => client.close());
    const get = () => client.request({ method: 'GET', path: '/x', credentials: alice });
    expect(await failure(get())).toMatchObject({ code: 'UPSTREAM_ERROR', status: 500 });
    expect(client.circuitState).toBe('open');
    for (let i = 0; i < 3; i++) {
      expect(await failure(get())).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', reason: 'CIRCUIT_OPEN' });
    }
    expect(calls).toHaveLength(1);
    expect(upstream.requests).toHaveLength(1);
    expect(client.load).toEqual({ active: 0, queued: 0 });
  });
});
