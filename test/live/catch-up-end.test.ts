/**
 * A subscriber whose stream ends (a stop, a delete) while its catch-up is still being read: the waiting
 * `next()` gets the ending at once, not never. Pure: the live core's subscriber queue, no server.
 */
import { describe, expect, it } from 'vitest';
import { Subscriber } from '../../src/upstream/live/subscriber-queue.ts';
import { BridgeError } from '../../src/upstream/port/bridge-error.ts';
import { V0_ORDER } from '../../src/upstream/v0/live/event-order.ts';

const owner = { detach: () => {} };

describe('a subscriber ended during its catch-up', () => {
  it('answers a waiting next() with the ending, and drops the live events held for the catch-up', async () => {
    const subscriber = new Subscriber<number>(owner, 10, V0_ORDER);
    subscriber.startCatchUp();
    const waiting = subscriber.next();
    subscriber.offer({
      eventId: 5,
      cursor: 'c5',
      timestamp: null,
      source: null,
      message: '',
      cause: null,
      phase: 'OBSERVATION',
      upstreamKind: 'run',
      raw: {},
      kind: 'OTHER',
    });
    subscriber.endAfterQueued(new BridgeError('CONVERSATION_STOPPED'));
    const settled = await Promise.race([
      waiting,
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 200)),
    ]);
    expect(settled).toMatchObject({ done: false, value: { code: 'CONVERSATION_STOPPED' } });
    expect(await subscriber.next()).toEqual({ value: undefined, done: true });
    // The catch-up's read, finishing late, adds nothing to an ended stream.
    subscriber.finishCatchUp(() => []);
    expect(await subscriber.next()).toEqual({ value: undefined, done: true });
  });
});
