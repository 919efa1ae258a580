/**
 * What a REST route is, seen from both sides: the request the HTTP server hands a handler, the answer
 * it gets back, and the table entry that says which method, path and body a handler takes, for both
 * faces. The HTTP server and every route table import this file; none of them import each other for it.
 */
import type { TenantId } from './auth.ts';
import type { ValidationIssue } from './validation/issue.ts';

/** A request once transport, auth and body parsing are done. */
export interface ApiRequest {
  tenant: TenantId;
  /** Came with `Authorization: Bearer` (the hosted variant): new conversations get trigger `openhands_api`. */
  viaBearer: boolean;
  query: URLSearchParams;
  /** Parsed JSON body; undefined when the request had none. */
  body: unknown;
  /** Path parameters captured by the route pattern. */
  params: string[];
  /**
   * For `body: 'deferred'` routes: the 422 a missing or malformed body earns, left for the handler to
   * return after checks the real server makes first (such as finding the conversation).
   */
  bodyProblem?: ApiResponse;
  /** For `body: 'raw'` routes: the body's bytes as sent (a multipart upload), and its content type. */
  rawBody?: Buffer;
  contentType?: string;
}

/**
 * An answer: JSON `body` unless `text` (a non-JSON body with its content type), `bytes` (a binary
 * one: a download, an archive) or `stream` is given.
 */
export interface ApiResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Sent as is instead of `body` (the V1 app server's HTML fallback, its text/plain 500). */
  text?: { contentType: string; content: string };
  /** Sent as is instead of `body` (file downloads, zip and tar.gz archives). */
  bytes?: { contentType: string; content: Uint8Array };
  /** Written chunk by chunk as JSON (the V1 stream-start) instead of `body`. */
  stream?: AsyncIterable<string>;
}

/** One entry of the route table. */
export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  pattern: RegExp;
  /**
   * Whether a JSON body is read and required (FastAPI answers a missing required body with 422 missing);
   * `deferred` reads it too but hands a missing or malformed body to the handler as `bodyProblem`;
   * `raw` reads it without parsing (`rawBody`, for multipart uploads).
   */
  body: 'required' | 'deferred' | 'ignored' | 'raw';
  handle(request: ApiRequest): ApiResponse | Promise<ApiResponse>;
}

/** A JSON answer: `body` as it will be serialized. */
export function json(status: number, body: unknown): ApiResponse {
  return { status, body };
}

/**
 * A batch get's answer (the real servers' `?ids=` and `?id=` routes): one entry per requested id, in
 * request order, `null` for an id `read` does not find (never a 404).
 */
export function batchAnswer(ids: readonly string[], read: (id: string) => unknown): ApiResponse {
  return json(
    200,
    ids.map((id) => read(id) ?? null),
  );
}

/** FastAPI's 422 answer: every problem found, as `{"detail": [...]}`. */
export function validationError(issues: ValidationIssue[]): ApiResponse {
  return { status: 422, body: { detail: issues } };
}

/**
 * What a FastAPI app answers for an uncaught exception (a failed `assert`, an error no handler
 * takes): 500, text/plain `Internal Server Error`.
 */
export function uncaughtError(): ApiResponse {
  return {
    status: 500,
    body: null,
    text: { contentType: 'text/plain; charset=utf-8', content: 'Internal Server Error' },
  };
}
