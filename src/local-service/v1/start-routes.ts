/**
 * Starting conversations on the app server (OpenHands/OpenHands `openhands/app_server/app_conversation/
 * app_conversation_router.py`, `live_status_app_conversation_service.py`; docs/upstream-facts.md, "V1
 * app server: conversations and start tasks"): `POST
 * /api/v1/app-conversations` answers the WORKING task at once; `stream-start` streams every snapshot as
 * one JSON array (`[\n`, snapshots separated by `,\n`, `]`), closing after READY or ERROR; the start
 * tasks can be read by id (`ids`, null for unknown), searched and counted. Same router file as the
 * conversation routes, so the same later-code bounds (`limit` 1..100 as a 422, 400 for bad `ids`).
 */
import type { AppConversationStartTaskRecord } from '../../contract/v1/app-server.ts';
import {
  type ApiRequest,
  type ApiResponse,
  batchAnswer,
  json,
  type Route,
  validationError,
} from '../api-route.ts';
import { readIds, readLimit, utcText } from './app-conversation-routes.ts';
import { type AppRecords, decodePageId, internalError, page } from './app-records.ts';
import { QueryReader } from './query.ts';
import type { TaskSort, V1StartTask } from './records.ts';
import { readStartRequest } from './start-request.ts';
import { isFinal, type Starter, StartRefused } from './start-task.ts';
import type { V1Store } from './store.ts';

/** What the start routes need. */
export interface StartRouteDeps {
  store: V1Store;
  starter: Starter;
  records: AppRecords;
}

const TASK_SORTS = ['CREATED_AT', 'CREATED_AT_DESC', 'UPDATED_AT', 'UPDATED_AT_DESC'] as const;

/** Snapshots as they come, ending after the final one: the body of stream-start. */
async function* streamOf(
  first: AppConversationStartTaskRecord,
  later: AsyncIterable<AppConversationStartTaskRecord>,
) {
  yield `[\n${JSON.stringify(first)}`;
  for await (const snapshot of later) yield `,\n${JSON.stringify(snapshot)}`;
  yield ']';
}

/** A push-to-pull queue of snapshots that ends after the final status. */
function snapshotQueue(records: AppRecords) {
  const items: AppConversationStartTaskRecord[] = [];
  let wake: (() => void) | null = null;
  let done = false;
  return {
    push(task: V1StartTask) {
      items.push(records.task(task));
      if (isFinal(task.status)) done = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const next = items.shift();
        if (next) {
          yield next;
          continue;
        }
        if (done) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
      }
    },
  };
}

/** Builds the start routes. */
export function createStartRoutes(deps: StartRouteDeps): Route[] {
  const { store, starter, records } = deps;

  type Begun = { ok: true; task: V1StartTask } | { ok: false; response: ApiResponse };

  function begin(request: ApiRequest, listener?: (task: V1StartTask) => void): Begun {
    const validated = readStartRequest(request.body);
    if (!validated.ok) return { ok: false, response: validationError(validated.issues) };
    try {
      return { ok: true, task: starter.start(request.tenant, validated.value, listener) };
    } catch (error) {
      // An unknown parent raises before the first snapshot: the real server's uncaught 500.
      if (error instanceof StartRefused) return { ok: false, response: internalError() };
      throw error;
    }
  }

  function start(request: ApiRequest): ApiResponse {
    const begun = begin(request);
    return begun.ok ? json(200, records.task(begun.task)) : begun.response;
  }

  function streamStart(request: ApiRequest): ApiResponse {
    const queue = snapshotQueue(records);
    const begun = begin(request, (snapshot) => queue.push(snapshot));
    if (!begun.ok) return begun.response;
    return { status: 200, body: null, stream: streamOf(records.task(begun.task), queue) };
  }

  function batchGet(request: ApiRequest): ApiResponse {
    const ids = readIds(request, 'ids');
    if (!Array.isArray(ids)) return ids;
    return batchAnswer(ids, (id) => {
      const task = store.getTask(request.tenant, id);
      return task && records.task(task);
    });
  }

  function readTaskFilters(q: QueryReader) {
    return {
      conversationId: q.uuid('conversation_id__eq'),
      createdGte: utcText(q.datetime('created_at__gte')),
    };
  }

  function search(request: ApiRequest): ApiResponse {
    const q = new QueryReader(request.query);
    const filters = readTaskFilters(q);
    const sort: TaskSort = q.enumValue('sort_order', TASK_SORTS, 'CREATED_AT_DESC');
    const limit = readLimit(q);
    if (q.issues.length > 0) return validationError(q.issues);
    const offset = decodePageId(q.string('page_id'));
    const rows = store.searchTasks(request.tenant, filters, sort, offset, limit + 1);
    return json(200, page(rows, offset, limit, records.task));
  }

  function count(request: ApiRequest): ApiResponse {
    const q = new QueryReader(request.query);
    const filters = readTaskFilters(q);
    if (q.issues.length > 0) return validationError(q.issues);
    return json(200, store.searchTasks(request.tenant, filters, 'CREATED_AT', 0, -1).length);
  }

  const base = '/api/v1/app-conversations';
  return [
    { method: 'POST', pattern: new RegExp(`^${base}$`), body: 'required', handle: start },
    { method: 'POST', pattern: new RegExp(`^${base}/stream-start$`), body: 'required', handle: streamStart },
    { method: 'GET', pattern: new RegExp(`^${base}/start-tasks$`), body: 'ignored', handle: batchGet },
    { method: 'GET', pattern: new RegExp(`^${base}/start-tasks/search$`), body: 'ignored', handle: search },
    { method: 'GET', pattern: new RegExp(`^${base}/start-tasks/count$`), body: 'ignored', handle: count },
  ];
}
