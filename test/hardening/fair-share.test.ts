/**
 * The per-credential share of upstream calls (src/upstream/fair-share.ts) on its own: the bound per
 * credential, other credentials unaffected, hand-over of a slot to the next waiter, cancellation and
 * the bounded queue. The end-to-end behaviour is in test/gateway/operation-budget.test.ts.
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
    const runs = calls.map((c, i) => share.run(i % 2 ? aliceAgain : alice, undefined, c.call, refusal));
    const other = heldCall();
    const otherRun = share.run(bob, undefined, other.call, refusal);
    await tick();
    expect(calls.map((c) => c.state.started)).toEqual([true, true, false, false]);
    expect(other.state.started).toBe(true);

    calls[0]?.state.finish();
    // A newcomer in the same turn must not take the slot handed to the first waiter.
    const late = heldCall();
    const lateRun = share.run(alice, undefined, late.call, refusal);
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

  it('refuses a waiting call when its signal aborts, without running it', async () => {
    const share = new FairShare(1, 100);
    const first = heldCall();
    const running = share.run(alice, undefined, first.call, refusal);
    const controller = new AbortController();
    const waiting = heldCall();
    const waitingRun = share.run(alice, controller.signal, waiting.call, refusal);
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
    const runs = [
      share.run(alice, undefined, first.call, refusal),
      share.run(alice, undefined, second.call, refusal),
    ];
    await expect(share.run(alice, undefined, heldCall().call, refusal)).rejects.toMatchObject({
      reason: 'queue-full',
    });
    // Another credential has its own queue.
    const bobs = heldCall();
    const bobRun = share.run(bob, undefined, bobs.call, refusal);
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
      share.run({ kind: 'session-api-key', key: secret }, undefined, asKey.call, refusal),
      share.run({ kind: 'bearer', token: secret }, undefined, asBearer.call, refusal),
      share.run({ kind: 'access-token', token: secret }, undefined, asAccessToken.call, refusal),
      ...anonymous.map((c) => share.run({ kind: 'none' }, undefined, c.call, refusal)),
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
