/**
 * The per-credential share of upstream calls (src/upstream/fair-share.ts) on its own: the bound per
 * credential, other credentials unaffected, hand-over of a slot to the next waiter, cancellation and
 * the bounded queue, through the synchronous `tryEnter` and the waiting `enter` as the client uses
 * them. The client's own use is in test/upstream/http-admission.test.ts, the end-to-end behaviour in
 * test/gateway/operation-budget.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { UpstreamCredentials } from '../../src/upstream/credentials.ts';
import { FairShare, type FairShareRefusal } from '../../src/upstream/fair-share.ts';

const alice: UpstreamCredentials = { kind: 'session-api-key', key: 'alice' };
// A different object with the same key: the share follows the key, not the object.
const aliceAgain: UpstreamCredentials = { kind: 'session-api-key', key: 'alice' };
const bob: UpstreamCredentials = { kind: 'bearer', token: 'bob' };

class Refused extends Error {
  constructor(readonly reason: FairShareRefusal) {
    super(reason);
  }
}
const refusal = (reason: FairShareRefusal) => new Refused(reason);

/** Runs `call` in a slot of the share as the client does: taken at once when free, else waited for. */
async function run<T>(
  share: FairShare,
  credentials: UpstreamCredentials,
  signal: AbortSignal | undefined,
  call: () => Promise<T>,
): Promise<T> {
  const lane = share.tryEnter(credentials) ?? (await share.enter(credentials, signal, refusal));
  try {
    return await call();
  } finally {
    share.leave(lane);
  }
}

/** A call that runs until `finish()` is called; `started` says whether it began. */
function heldCall() {
  let finish = () => {};
  const state = { started: false, finish: () => finish() };
  const call = () => {
    state.started = true;
    return new Promise<void>((resolve) => {
      finish = resolve;
    });
  };
  return { state, call };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('FairShare', () => {
  it('runs at most the bound per credential, others at once, and hands a freed slot to the next waiter', async () => {
    const share = new FairShare(2, 100);
    const calls = Array.from({ length: 4 }, () => heldCall());
    const runs = calls.map((c, i) => run(share, i % 2 ? aliceAgain : alice, undefined, c.call));
    const other = heldCall();
    const otherRun = run(share, bob, undefined, other.call);
    await tick();
    expect(calls.map((c) => c.state.started)).toEqual([true, true, false, false]);
    expect(other.state.started).toBe(true);

    calls[0]?.state.finish();
    // A newcomer in the same turn must not take the slot handed to the first waiter.
    const late = heldCall();
    const lateRun = run(share, alice, undefined, late.call);
    await tick();
    expect(calls.map((c) => c.state.started)).toEqual([true, true, true, false]);
    expect(late.state.started).toBe(false);

    let done = false;
    const all = Promise.all([...runs, otherRun, lateRun]).then(() => {
      done = true;
    });
    while (!done) {
      for (const c of [...calls, other, late]) c.state.finish();
      await tick();
    }
    await all;
    expect(late.state.started).toBe(true);
    expect(share.lanes).toBe(0);
  });

  it('tryEnter takes a free slot at once, never queues, and finds no slot free while one is handed to a waiter', async () => {
    const share = new FairShare(1, 100);
    const first = share.tryEnter(alice);
    expect(first).not.toBeNull();
    expect(share.tryEnter(aliceAgain)).toBeNull();
    const bobs = share.tryEnter(bob);
    expect(bobs).not.toBeNull();
    let admitted = false;
    const waiting = share.enter(alice, undefined, refusal).then((lane) => {
      admitted = true;
      return lane;
    });
    if (first) share.leave(first);
    // Handed over, not freed: a newcomer in the same turn finds nothing, the waiter gets it.
    expect(share.tryEnter(alice)).toBeNull();
    const handed = await waiting;
    expect(admitted).toBe(true);
    share.leave(handed);
    if (bobs) share.leave(bobs);
    expect(share.lanes).toBe(0);
    const again = share.tryEnter(alice);
    expect(again).not.toBeNull();
    if (again) share.leave(again);
    expect(share.lanes).toBe(0);
  });

  it('refuses a call whose signal has already aborted when it would have to wait', async () => {
    const share = new FairShare(1, 100);
    const first = share.tryEnter(alice);
    const controller = new AbortController();
    controller.abort();
    await expect(share.enter(alice, controller.signal, refusal)).rejects.toMatchObject({ reason: 'aborted' });
    if (first) share.leave(first);
    expect(share.lanes).toBe(0);
  });

  it('refuses a waiting call when its signal aborts, without running it', async () => {
    const share = new FairShare(1, 100);
    const first = heldCall();
    const running = run(share, alice, undefined, first.call);
    const controller = new AbortController();
    const waiting = heldCall();
    const waitingRun = run(share, alice, controller.signal, waiting.call);
    controller.abort();
    await expect(waitingRun).rejects.toMatchObject({ reason: 'aborted' });
    first.state.finish();
    await running;
    expect(waiting.state.started).toBe(false);
    expect(share.lanes).toBe(0);
  });

  it('refuses at once when the credential already has maxWaiting calls waiting', async () => {
    const share = new FairShare(1, 1);
    const first = heldCall();
    const second = heldCall();
    const runs = [run(share, alice, undefined, first.call), run(share, alice, undefined, second.call)];
    await expect(run(share, alice, undefined, heldCall().call)).rejects.toMatchObject({
      reason: 'queue-full',
    });
    // Another credential has its own queue.
    const bobs = heldCall();
    const bobRun = run(share, bob, undefined, bobs.call);
    await tick();
    expect(bobs.state.started).toBe(true);
    first.state.finish();
    await tick();
    second.state.finish();
    bobs.state.finish();
    await Promise.all([...runs, bobRun]);
  });

  it('keys by kind and secret: the same string as another kind is another credential; callers without one share a lane', async () => {
    const share = new FairShare(1, 100);
    const secret = 'same-string';
    const asKey = heldCall();
    const asBearer = heldCall();
    const asAccessToken = heldCall();
    const anonymous = [heldCall(), heldCall()];
    const runs = [
      run(share, { kind: 'session-api-key', key: secret }, undefined, asKey.call),
      run(share, { kind: 'bearer', token: secret }, undefined, asBearer.call),
      run(share, { kind: 'access-token', token: secret }, undefined, asAccessToken.call),
      ...anonymous.map((c) => run(share, { kind: 'none' }, undefined, c.call)),
    ];
    await tick();
    expect([asKey, asBearer, asAccessToken, ...anonymous].map((c) => c.state.started)).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(share.lanes).toBe(4);
    for (const c of [asKey, asBearer, asAccessToken, ...anonymous]) c.state.finish();
    await tick();
    anonymous[1]?.state.finish();
    await Promise.all(runs);
    expect(share.lanes).toBe(0);
  });
});
