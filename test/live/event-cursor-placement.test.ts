/**
 * Where an id-less event's cursor points (src/upstream/v0/event-cursor.ts, applied by the live core's
 * subscriber queue through V0's order): for every subscriber, resuming from any event's cursor neither
 * repeats nor skips a stored event, whatever the catch-up start, the shared stream's seam and the live
 * interleaving.
 * Pure: the subscriber queue and the V0 cursor rules, no server (the end-to-end cases are in
 * event-cursors.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Subscriber } from '../../src/upstream/live/subscriber-queue.ts';
import { openEventCursor } from '../../src/upstream/port/event-cursor.ts';
import type { ConversationEvent } from '../../src/upstream/port/events.ts';
import { placeAfter, v0Cursor, v0EventIdOf } from '../../src/upstream/v0/event-cursor.ts';
import { V0_ORDER } from '../../src/upstream/v0/live/event-order.ts';

function event(eventId: number | null, cursorId: number): ConversationEvent {
  return {
    eventId,
    cursor: v0Cursor(cursorId),
    timestamp: null,
    source: null,
    message: '',
    cause: null,
    phase: eventId === null ? 'STATUS_UPDATE' : 'OBSERVATION',
    upstreamKind: eventId === null ? 'status_update' : 'run',
    raw: {},
    kind: 'OTHER',
  };
}

const positionOf = (cursor: string) => v0EventIdOf(openEventCursor(cursor));

/** V0's catch-up merge, as the live core calls it: the subscriber resumed after `after`, the socket stood at `seam`. */
const merge = (read: ConversationEvent[], held: readonly ConversationEvent[], after: number, seam: number) =>
  V0_ORDER.mergeCatchUp(read, held, { after, attachedAt: seam, releasedBeforeRead: 0 });

async function drain(subscriber: Subscriber<number>): Promise<ConversationEvent[]> {
  subscriber.complete();
  const out: ConversationEvent[] = [];
  for (let next = await subscriber.next(); !next.done; next = await subscriber.next()) {
    out.push(next.value as ConversationEvent);
  }
  return out;
}

/** Resuming from each delivered event's cursor gives exactly the stored events delivered after it. */
function expectExactResumes(delivered: ConversationEvent[], after: number): void {
  let lastStored = after;
  delivered.forEach((item, index) => {
    const position = positionOf(item.cursor);
    if (item.eventId !== null) {
      lastStored = item.eventId;
      expect(position).toBe(item.eventId);
      return;
    }
    const nextStored = delivered.slice(index + 1).find((later) => later.eventId !== null)?.eventId;
    expect(position).toBeGreaterThanOrEqual(lastStored); // nothing delivered is repeated
    if (nextStored != null) expect(position).toBeLessThan(nextStored); // nothing after it is skipped
  });
}

describe('the cursor of an id-less event', () => {
  it('is raised to the last id of a subscriber that resumed ahead of its socket', async () => {
    const subscriber = new Subscriber({ detach: () => {} }, 100, V0_ORDER);
    subscriber.last = 10;
    subscriber.startCatchUp();
    // The socket released it after id 5 (its own place), before ids 6..12 reached it live.
    subscriber.offer(placeAfter(event(null, -1), 5));
    subscriber.finishCatchUp((held) => merge([event(11, 11), event(12, 12)], held, 10, 5));
    const delivered = await drain(subscriber);
    expect(delivered.map((item) => [item.eventId, positionOf(item.cursor)])).toEqual([
      [null, 10],
      [11, 11],
      [12, 12],
    ]);
  });

  it('resumes exactly from every delivered event, for any start, seam and live interleaving', async () => {
    const scenario = fc
      .record({
        newest: fc.integer({ min: 0, max: 30 }),
        after: fc.integer({ min: -1, max: 30 }),
        seam: fc.integer({ min: -1, max: 30 }),
        historyEnd: fc.integer({ min: -1, max: 30 }),
        idless: fc.array(fc.integer({ min: -1, max: 30 }), { maxLength: 6 }),
      })
      .map(({ newest, after, seam, historyEnd, idless }) => {
        const start = Math.min(after, newest);
        const seamId = Math.min(seam, newest);
        // The catch-up read holds everything after `start` up to at least the seam.
        const end = Math.min(Math.max(historyEnd, seamId), newest);
        return { newest, start, seamId, end, idless };
      });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ newest, start, seamId, end, idless }) => {
        const subscriber = new Subscriber({ detach: () => {} }, 1000, V0_ORDER);
        subscriber.last = start;
        subscriber.startCatchUp();
        // The shared stream after the seam: ids seamId+1..newest, id-less ones placed as the socket does.
        for (let id = seamId + 1; id <= newest + 1; id++) {
          for (const at of idless) if (at === id - 1) subscriber.offer(placeAfter(event(null, -1), id - 1));
          if (id <= newest) subscriber.offer(event(id, id));
        }
        const history: ConversationEvent[] = [];
        for (let id = start + 1; id <= end; id++) history.push(event(id, id));
        subscriber.finishCatchUp((held) => merge(history, held, start, seamId));
        const delivered = await drain(subscriber);
        const ids = delivered.map((item) => item.eventId).filter((id): id is number => id !== null);
        expect(ids).toEqual(
          Array.from({ length: Math.max(0, newest - start) }, (_, index) => start + 1 + index),
        );
        expectExactResumes(delivered, start);
      }),
      { numRuns: 300, seed: 20261126 },
    );
  });
});
