/**
 * The app server's copies of events (OpenHands/OpenHands `openhands/app_server/event/event_router.py`,
 * `filesystem_event_service.py`; docs/upstream-facts.md, "V1 app server: event copies"): app main's
 * `/api/v1/events/search|count` and `GET /api/v1/events?id=`, and the later conversation-scoped
 * `/api/v1/conversation/{id}/events/search|count` and `?id=`. Ordered as the real file store orders
 * them, by file name `<YYYYMMDDHHMMSS>_<Kind>_<hex id>`: second resolution, then kind alphabetically,
 * then id, so events of one second are not in emission order. `next_page_id` is the file name of the
 * next page's first item. Timestamp filters compare with that naive second; an aware value is the
 * real server's naive-vs-aware 500. The copies here are the agent's own log, without the webhook lag.
 */
import { QUALIFIED_EVENT_KINDS, type SdkEventRecord } from '../../contract/v1/events.ts';
import {
  type ApiRequest,
  type ApiResponse,
  batchAnswer,
  json,
  type Route,
  validationError,
} from '../api-route.ts';
import { issue } from '../validation/issue.ts';
import { internalError } from './app-records.ts';
import { uuidHex } from './conversation-state.ts';
import { QueryReader, uuidIssue } from './query.ts';
import type { V1Store } from './store.ts';

const KINDS = Object.keys(QUALIFIED_EVENT_KINDS) as Array<keyof typeof QUALIFIED_EVENT_KINDS>;
const SORTS = ['TIMESTAMP', 'TIMESTAMP_DESC'] as const;
const EVERYTHING = { kind: null, source: null, timestampGte: null, timestampLt: null };

/** The event's file name in the real filesystem event store. */
function fileName(event: SdkEventRecord): string {
  const second = event.timestamp.slice(0, 19).replace(/[-T:]/g, '');
  return `${second}_${event.kind}_${event.id.replaceAll('-', '')}`;
}

/** Builds the event-copy routes. */
export function createAppEventRoutes(store: V1Store): Route[] {
  /** The caller's events (of one conversation, or all), in file-name order, or an error answer. */
  function select(
    request: ApiRequest,
    q: QueryReader,
    scoped: string | null,
  ): Array<[string, SdkEventRecord]> | ApiResponse {
    const conversationId = scoped ?? q.uuid('conversation_id__eq');
    const kind = q.enumValue('kind__eq', KINDS, null);
    const gte = q.datetime('timestamp__gte');
    const lt = q.datetime('timestamp__lt');
    if (q.issues.length > 0) return validationError(q.issues);
    if (gte?.aware || lt?.aware) return internalError();
    const ids =
      conversationId !== null
        ? [conversationId].filter((id) => store.getConversation(request.tenant, id) !== undefined)
        : store
            .searchConversations(
              request.tenant,
              {
                titleContains: null,
                createdGte: null,
                createdLt: null,
                updatedGte: null,
                updatedLt: null,
                includeSubConversations: true,
                sandboxId: null,
              },
              0,
              -1,
            )
            .map((c) => c.id);
    // The file name's naive second is what the bounds compare with.
    const bound = (d: { localText: string } | null) =>
      d === null ? null : d.localText.slice(0, 19).replace(/[-T:]/g, '');
    const from = bound(gte);
    const to = bound(lt);
    return ids
      .flatMap((id) => store.listEvents(id, { ...EVERYTHING, kind }))
      .map((event): [string, SdkEventRecord] => [fileName(event), event])
      .filter(
        ([name]) => (from === null || name.slice(0, 14) >= from) && (to === null || name.slice(0, 14) < to),
      )
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  function search(request: ApiRequest, scoped: string | null): ApiResponse {
    const q = new QueryReader(request.query);
    const sort = q.enumValue('sort_order', SORTS, 'TIMESTAMP');
    const limit = q.int('limit', 100, { gt: 0 });
    const selected = select(request, q, scoped);
    if (!Array.isArray(selected)) return selected;
    if (limit > 100) return internalError();
    if (sort === 'TIMESTAMP_DESC') selected.reverse();
    const pageId = q.string('page_id');
    const start = Math.max(0, pageId === null ? 0 : selected.findIndex(([name]) => name === pageId));
    const next = selected[start + limit];
    return json(200, {
      items: selected.slice(start, start + limit).map(([, event]) => event),
      next_page_id: next ? next[0] : null,
    });
  }

  function count(request: ApiRequest, scoped: string | null): ApiResponse {
    const selected = select(request, new QueryReader(request.query), scoped);
    return Array.isArray(selected) ? json(200, selected.length) : selected;
  }

  function batchGet(request: ApiRequest, scoped: string | null): ApiResponse {
    const ids = request.query.getAll('id');
    if (ids.length === 0) return validationError([issue('missing', ['query', 'id'], 'Field required', null)]);
    if (ids.length > 100) return internalError();
    const selected = select(request, new QueryReader(new URLSearchParams()), scoped);
    if (!Array.isArray(selected)) return selected;
    const byId = new Map(selected.map(([, event]) => [event.id, event]));
    return batchAnswer(ids, (id) => byId.get(id));
  }

  /** The later routes' path id, or a 422. */
  function scopedId(request: ApiRequest): string | ApiResponse {
    const raw = request.params[0] ?? '';
    return uuidHex(raw) ?? validationError([uuidIssue(['path', 'conversation_id'], raw)]);
  }

  const scoped = (handle: (request: ApiRequest, id: string) => ApiResponse) => (request: ApiRequest) => {
    const id = scopedId(request);
    return typeof id === 'string' ? handle(request, id) : id;
  };
  const conversationPath = (tail: string) => new RegExp(`^/api/v1/conversation/([^/]+)/events${tail}$`);

  return [
    {
      method: 'GET',
      pattern: /^\/api\/v1\/events\/search$/,
      body: 'ignored',
      handle: (r) => search(r, null),
    },
    { method: 'GET', pattern: /^\/api\/v1\/events\/count$/, body: 'ignored', handle: (r) => count(r, null) },
    { method: 'GET', pattern: /^\/api\/v1\/events$/, body: 'ignored', handle: (r) => batchGet(r, null) },
    { method: 'GET', pattern: conversationPath('/search'), body: 'ignored', handle: scoped(search) },
    { method: 'GET', pattern: conversationPath('/count'), body: 'ignored', handle: scoped(count) },
    { method: 'GET', pattern: conversationPath(''), body: 'ignored', handle: scoped(batchGet) },
  ];
}
