/**
 * The ordering rules of src/upstream/v0/live/event-order.ts as properties over random arrival orders (pure
 * functions: no server needed; the end-to-end behaviour is in event-order.test.ts). An event here is
 * `{ eventId, tag }`; the tag tells id-less events apart.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdOrder, mergeCatchUp, orderBatch } from '../../src/upstream/v0/live/event-order.ts';

type Event = { eventId: number | null; tag: string };

const storedIds = (events: readonly Event[]) =>
  events.map((event) => event.eventId).filter((id): id is number => id !== null);

const strictlyIncreasing = (ids: number[]) =>
  ids.every((id, index) => index === 0 || id > (ids[index - 1] as number));

/** A batch as an upstream might send it: ids 0..30 in any order, repeats allowed, id-less ones mixed in. */
const batch = fc
  .array(fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constant(null)), { maxLength: 40 })
  .map((ids) => ids.map((eventId, index): Event => ({ eventId, tag: `e${index}` })));

const RUNS = { numRuns: 500, seed: 20261123 };

describe('orderBatch', () => {
  it('sorts by id, drops repeats and ids at or below `after`, and keeps every id-less event after what preceded it', () => {
    fc.assert(
      fc.property(batch, fc.integer({ min: -1, max: 20 }), (input, after) => {
        const output = orderBatch(input, after);
        const expectedIds = [...new Set(storedIds(input).filter((id) => id > after))].sort((a, b) => a - b);
        expect(storedIds(output)).toEqual(expectedIds);

        const idLessIn = input.filter((event) => event.eventId === null);
        const idLessOut = output.filter((event) => event.eventId === null);
        expect(idLessOut).toEqual(idLessIn);
        for (const event of idLessIn) {
          const arrivedBefore = storedIds(input.slice(0, input.indexOf(event))).filter((id) => id > after);
          const position = output.indexOf(event);
          const deliveredBefore = storedIds(output.slice(0, position));
          // After every stored event that arrived before it, and before any higher id.
          for (const id of arrivedBefore) expect(deliveredBefore).toContain(id);
          const highest = Math.max(after, ...arrivedBefore);
          expect(storedIds(output.slice(position)).every((id) => id > highest)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('orders the real server replay of the issue (agent state 8 held back after 11)', () => {
    const arrival = [9, 10, 11, 8].map((eventId) => ({ eventId, tag: String(eventId) }));
    expect(storedIds(orderBatch(arrival, 7))).toEqual([8, 9, 10, 11]);
  });
});

describe('mergeCatchUp', () => {
  it('yields the union of history and live in strictly increasing id order, live id-less events after the seam', () => {
    fc.assert(
      fc.property(
        batch,
        batch,
        fc.integer({ min: -1, max: 15 }),
        fc.integer({ min: -1, max: 15 }),
        (h, l, after, seam) => {
          const history = orderBatch(h, after);
          // Live events come from the shared stream: ordered, and above the seam.
          const live = orderBatch(l, Math.max(after, seam));
          const output = mergeCatchUp(history, live, seam);
          const ids = storedIds(output);
          expect(strictlyIncreasing(ids)).toBe(true);
          expect(new Set(ids)).toEqual(new Set([...storedIds(history), ...storedIds(live)]));
          // Live events keep their order (id-less ones included); history's id-less events are dropped.
          expect(output.filter((event) => live.includes(event))).toEqual(live);
          expect(output.every((event) => event.eventId !== null || live.includes(event))).toBe(true);
          for (const event of live.filter((e) => e.eventId === null)) {
            const before = storedIds(output.slice(0, output.indexOf(event)));
            for (const id of storedIds(history)) if (id <= seam) expect(before).toContain(id);
          }
        },
      ),
      RUNS,
    );
  });
});

describe('IdOrder', () => {
  it('over replays and live events in any order, releases each stored id once, in increasing order, losing none that was ahead', () => {
    const step = fc.oneof(
      batch.map((events) => ({ kind: 'replay' as const, events })),
      batch.map((events) => ({ kind: 'live' as const, events })),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 6 }), (steps) => {
        const late: number[] = [];
        const order = new IdOrder<Event>((id) => late.push(id));
        const released: Event[] = [];
        const mustRelease = new Set<number>();
        for (const { kind, events } of steps) {
          if (kind === 'replay') {
            const floor = order.last ?? -1;
            for (const id of storedIds(events)) if (id > floor) mustRelease.add(id);
            released.push(...order.release(events, []));
          } else {
            for (const event of events) {
              if (event.eventId !== null && event.eventId > (order.last ?? -1))
                mustRelease.add(event.eventId);
              if (order.accept(event.eventId)) released.push(event);
            }
          }
        }
        const ids = storedIds(released);
        expect(strictlyIncreasing(ids)).toBe(true);
        expect(new Set(ids)).toEqual(mustRelease);
        expect(released.filter((e) => e.eventId === null)).toHaveLength(
          steps.flatMap((s) => s.events).filter((e) => e.eventId === null).length,
        );
        // Only ids that were never released count as late.
        for (const id of late) expect(ids).not.toContain(id);
      }),
      RUNS,
    );
  });

  it('counts a lower id arriving live after a higher one as late, a repeated one as a duplicate', () => {
    const late: number[] = [];
    const order = new IdOrder<Event>((id) => late.push(id));
    order.release(
      [0, 1, 2].map((eventId) => ({ eventId, tag: '' })),
      [],
    );
    expect(order.accept(4)).toBe(true);
    expect(order.accept(3)).toBe(false);
    expect(order.accept(2)).toBe(false);
    expect(late).toEqual([3]);
    expect(order.last).toBe(4);
  });
});
