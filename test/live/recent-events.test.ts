/**
 * src/upstream/v0/live/recent-events.ts, the replay fallback's recent events (a pure class: no server
 * needed; the fallback end to end is in catch-up-fallback.test.ts and event-order.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ConversationEvent } from '../../src/upstream/port/events.ts';
import { RecentEvents } from '../../src/upstream/v0/live/recent-events.ts';

const event = (eventId: number) => ({ eventId }) as ConversationEvent;
const ids = (events: ConversationEvent[] | null) => events?.map((each) => each.eventId) ?? null;

describe('RecentEvents', () => {
  it('answers the kept events after an id while it holds every one of them', () => {
    const history = new RecentEvents(3, () => true);
    for (const id of [0, 1, 2]) history.record(event(id));
    expect(ids(history.after(-1))).toEqual([0, 1, 2]);
    expect(ids(history.after(1))).toEqual([2]);
    expect(ids(history.after(5))).toEqual([]);
  });

  it('answers null for ids older than it holds once events were evicted', () => {
    const history = new RecentEvents(3, () => true);
    for (const id of [0, 1, 2, 3, 4]) history.record(event(id));
    expect(history.after(0)).toBeNull();
    expect(ids(history.after(1))).toEqual([2, 3, 4]);
  });

  it('keeps nothing while not recording (the events route serves catch-ups), and never claims those ids', () => {
    let recording = false;
    const history = new RecentEvents(10, () => recording);
    for (const id of [0, 1, 2]) history.record(event(id));
    expect(history.after(-1)).toBeNull();
    expect(ids(history.after(2))).toEqual([]);
    // The route turned out missing: from here on it keeps what is released.
    recording = true;
    for (const id of [3, 4]) history.record(event(id));
    expect(history.after(1)).toBeNull();
    expect(ids(history.after(2))).toEqual([3, 4]);
  });
});
