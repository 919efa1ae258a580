/**
 * The stored events reader (src/upstream/v0/stored-events.ts) against answers the local service never
 * gives: the two kinds of 404, 405, a page that never advances, ids going backwards, an answer that is
 * not a page, a refused key. Real HTTP through the gateway's UpstreamClient; the local service's own
 * answers are covered by catch-up.test.ts.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import type { UpstreamCredentials } from '../../src/upstream/credentials.ts';
import { UpstreamClient } from '../../src/upstream/http.ts';
import { readStoredEventsAfter } from '../../src/upstream/v0/stored-events.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';

const ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const KEY: UpstreamCredentials = { kind: 'session-api-key', key: 'caller-key' };

async function readerAgainst(answer: (startId: number) => { status: number; body: unknown }) {
  const upstream = await misbehavingUpstreamForTest((req, res) => {
    const startId = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('start_id'));
    const { status, body } = answer(startId);
    sendJson(res, status, body);
  });
  const client = new UpstreamClient({ baseUrl: upstream.url, retries: 0, circuitBreaker: false });
  onTestFinished(() => client.close());
  return {
    upstream,
    read: (after: number) => readStoredEventsAfter({ client, credentials: KEY }, ID, after),
  };
}

const event = (id: number) => ({ id, source: 'agent', message: `m${id}`, action: 'message', args: {} });

describe('readStoredEventsAfter', () => {
  it('pages forward from afterEventId + 1, 100 at a time, with the caller key, until has_more is false', async () => {
    const { upstream, read } = await readerAgainst((startId) => {
      const ids = Array.from({ length: 230 }, (_, id) => id).filter((id) => id >= startId);
      return { status: 200, body: { events: ids.slice(0, 100).map(event), has_more: ids.length > 100 } };
    });
    const result = await read(4);
    expect(result.kind).toBe('events');
    expect(result.kind === 'events' && result.events.map((e) => e.id)).toEqual(
      Array.from({ length: 225 }, (_, i) => i + 5),
    );
    expect(upstream.requests.map((request) => request.path)).toEqual([
      `/api/conversations/${ID}/events?start_id=5&limit=100`,
      `/api/conversations/${ID}/events?start_id=105&limit=100`,
      `/api/conversations/${ID}/events?start_id=205&limit=100`,
    ]);
    expect(upstream.requests.every((request) => request.headers['x-session-api-key'] === 'caller-key')).toBe(
      true,
    );
  });

  it.each([
    ['404 Not Found (an older server without the route)', 404, { detail: 'Not Found' }, 'route-missing'],
    ['405', 405, { detail: 'Method Not Allowed' }, 'route-missing'],
    ['404 with a bare string body', 404, 'nope', 'route-missing'],
    ['the route own 404', 404, { detail: `Conversation ${ID} not found` }, 'conversation-not-found'],
  ])('tells %s apart', async (_label, status, body, kind) => {
    const { read } = await readerAgainst(() => ({ status, body }));
    expect(await read(-1)).toEqual({ kind });
  });

  it('stops when a page claims more but does not advance, and skips ids that go backwards', async () => {
    const { upstream, read } = await readerAgainst((startId) =>
      startId === 0
        ? {
            status: 200,
            body: { events: [event(0), event(1), event(1), event(0), { id: 'x' }], has_more: true },
          }
        : { status: 200, body: { events: [event(1)], has_more: true } },
    );
    const result = await read(-1);
    expect(result.kind === 'events' && result.events.map((e) => e.id)).toEqual([0, 1]);
    expect(upstream.requests).toHaveLength(2);
  });

  it('fails with coded errors, never the raw body: not a page, a refused key', async () => {
    const notAPage = await readerAgainst(() => ({
      status: 200,
      body: { results: [], secret: 'caller-key' },
    }));
    await expect(notAPage.read(-1)).rejects.toMatchObject({
      extensions: { code: 'UPSTREAM_ERROR' },
      message: expect.not.stringContaining('caller-key'),
    });
    const refused = await readerAgainst(() => ({ status: 401, body: { detail: 'Unauthorized' } }));
    await expect(refused.read(-1)).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
  });
});
