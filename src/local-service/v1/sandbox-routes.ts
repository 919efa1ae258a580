/**
 * The app server's sandbox routes (app main's `openhands/app_server/sandbox/sandbox_router.py`;
 * docs/upstream-facts.md, "V1 app server: sandboxes"; DELETE in the later `/{sandbox_id}` shape of
 * commit `4fbc9b2`, not main's query-parameter accident): search (newest
 * first), batch get by the singular, repeated `id`, create, pause, resume (back on the same port),
 * delete. No later bounds are known for this router, so main's stand: `limit` over 100 and 100+ ids
 * fail an assertion (500 text/plain).
 */
import {
  type ApiRequest,
  type ApiResponse,
  batchAnswer,
  json,
  type Route,
  validationError,
} from '../api-route.ts';
import { issue } from '../validation/issue.ts';
import { type AppRecords, decodePageId, detail, internalError, page } from './app-records.ts';
import { QueryReader } from './query.ts';
import type { Sandboxes } from './sandboxes.ts';
import type { V1Store } from './store.ts';

/** What the sandbox routes need. */
export interface SandboxRouteDeps {
  store: V1Store;
  sandboxes: Sandboxes;
  records: AppRecords;
}

const ACTION = (name: string) => new RegExp(`^/api/v1/sandboxes/([^/]+)/${name}$`);
const SUCCESS = json(200, { success: true });
const NOT_FOUND = detail(404, 'Not Found');

/** Builds the sandbox routes. */
export function createSandboxRoutes(deps: SandboxRouteDeps): Route[] {
  const { store, sandboxes, records } = deps;

  function search(request: ApiRequest): ApiResponse {
    const q = new QueryReader(request.query);
    const limit = q.int('limit', 100, { gt: 0 });
    if (q.issues.length > 0) return validationError(q.issues);
    // `Query(lte=100)` is no constraint: 101 passes validation and fails `assert limit <= 100`.
    if (limit > 100) return internalError();
    const offset = decodePageId(q.string('page_id'));
    return json(
      200,
      page(store.listSandboxes(request.tenant, offset, limit + 1), offset, limit, records.sandbox),
    );
  }

  function batchGet(request: ApiRequest): ApiResponse {
    const ids = request.query.getAll('id');
    if (ids.length === 0) return validationError([issue('missing', ['query', 'id'], 'Field required', null)]);
    if (ids.length >= 100) return internalError();
    return batchAnswer(ids, (id) => {
      const sandbox = store.getSandbox(request.tenant, id);
      return sandbox && records.sandbox(sandbox);
    });
  }

  async function create(request: ApiRequest): Promise<ApiResponse> {
    return json(200, records.sandbox(await sandboxes.create(request.tenant)));
  }

  async function pause(request: ApiRequest): Promise<ApiResponse> {
    return (await sandboxes.pause(request.tenant, request.params[0] ?? '')) ? SUCCESS : NOT_FOUND;
  }

  async function resume(request: ApiRequest): Promise<ApiResponse> {
    return (await sandboxes.resume(request.tenant, request.params[0] ?? '')) ? SUCCESS : NOT_FOUND;
  }

  async function remove(request: ApiRequest): Promise<ApiResponse> {
    return (await sandboxes.remove(request.tenant, request.params[0] ?? '')) ? SUCCESS : NOT_FOUND;
  }

  return [
    { method: 'GET', pattern: /^\/api\/v1\/sandboxes\/search$/, body: 'ignored', handle: search },
    { method: 'GET', pattern: /^\/api\/v1\/sandboxes$/, body: 'ignored', handle: batchGet },
    { method: 'POST', pattern: /^\/api\/v1\/sandboxes$/, body: 'ignored', handle: create },
    { method: 'POST', pattern: ACTION('pause'), body: 'ignored', handle: pause },
    { method: 'POST', pattern: ACTION('resume'), body: 'ignored', handle: resume },
    { method: 'DELETE', pattern: /^\/api\/v1\/sandboxes\/([^/]+)$/, body: 'ignored', handle: remove },
  ];
}
