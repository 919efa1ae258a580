/**
 * The common GraphQL request, a JSON POST of a query or mutation, answered without Yoga's fetch-API
 * pipeline: no Request/Response objects, no URL, no per-request hook arrays for the request parsers,
 * parameter checks and result processors that have nothing to do for it. The first time it sees a
 * text it runs the same enveloped parse, validate, context and execute that Yoga runs (every envelop
 * plugin: limits, cost budget, variable check, rate limit, shutdown, deadline, masking, the observers),
 * as the graphql-ws binding does; after that the text runs prepared (below). Either way it answers with
 * Yoga's own result rules (media type choice, HTTP status, serialization).
 *
 * It takes only what it can answer exactly as Yoga would; everything else goes to Yoga untouched:
 * other methods, paths or content types, a browser's request (an `Origin`: CORS headers are Yoga's),
 * no usable Content-Length (the body limit's 411/413 are Yoga's), an Accept with no JSON type, and no
 * allow-list of persisted operations. A body it has read but will not run (a batch, APQ extensions,
 * unknown or mistyped parameters, a syntax or validation error, a subscription) is handed to Yoga as
 * read, so every refusal keeps Yoga's exact answer; none of those have run anything yet.
 * test/gateway/http-fast-path.test.ts compares both paths' answers.
 *
 * A text it has parsed and validated once is prepared (compiled/prepared-operations.ts): from then on
 * it runs without envelop (no parse, validate or hooks per request), with the same guards, observers
 * and masking; test/gateway/prepared-operations.test.ts compares those answers with Yoga's too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type DocumentNode, type ExecutionResult, GraphQLError, getOperationAST } from 'graphql';
import { createGraphQLError, maskError, processRegularResult, type YogaServerInstance } from 'graphql-yoga';
import type pino from 'pino';
import { ERROR_CATALOGUE } from '../../errors.ts';
import type { PreparedOperations, PreparedResult } from '../compiled/prepared-operations.ts';
import { OperationSignal } from '../protection/operation-signal.ts';

/** The two media types of a regular (non-streamed) GraphQL answer. */
type JsonMediaType = 'application/json' | 'application/graphql-response+json';

/** Parameters Yoga accepts in a body (useCheckGraphQLQueryParams); the fast path runs no extensions. */
const PARAMETERS = new Set(['query', 'variables', 'operationName']);

/**
 * The media type Yoga's result processors pick for a non-streamed result: the first entry of Accept
 * (absent: `*\/*`; q-values are ignored, as Yoga does) whose type matches one of the two JSON types,
 * `application/json` when it matches both (wildcards); entries with a charset other than utf-8 are
 * skipped. Null when none matches (Yoga answers 406, or streams).
 */
export function acceptedJsonMediaType(accept: string | undefined): JsonMediaType | null {
  // A client sends the same Accept on every request: the last answer is kept (a pure function of it).
  if (accept === lastAccept.header) return lastAccept.mediaType;
  const mediaType = mediaTypeOfAccept(accept);
  lastAccept = { header: accept, mediaType };
  return mediaType;
}

/** The last Accept header {@link acceptedJsonMediaType} read, and its answer. */
let lastAccept: { header: string | undefined; mediaType: JsonMediaType | null } = {
  header: undefined,
  mediaType: mediaTypeOfAccept(undefined),
};

function mediaTypeOfAccept(accept: string | undefined): JsonMediaType | null {
  const entries = (accept ?? '*/*').replace(/\s/g, '').toLowerCase().split(',');
  for (const entry of entries) {
    const [mediaType = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [type, subtype] = mediaType.split('/');
    if (type !== '*' && type !== 'application') continue;
    if (subtype === '*' || subtype === 'json') return 'application/json';
    if (subtype === 'graphql-response+json') return 'application/graphql-response+json';
  }
  return null;
}

/** `application/json`, with or without `charset=utf-8` (Yoga's isPOSTJsonRequest takes both). */
function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  // As with Accept: a client sends the same Content-Type every time, and the answer is a pure function of it.
  if (value === lastContentType.header) return lastContentType.json;
  const json = readsAsJson(value);
  lastContentType = { header: value, json };
  return json;
}

/** The last Content-Type {@link isJsonContentType} read, and its answer. */
let lastContentType = { header: 'application/json', json: true };

function readsAsJson(value: string): boolean {
  const [type = '', ...params] = value.toLowerCase().split(';');
  if (type.trim() !== 'application/json') return false;
  return params.every((param) => param.trim() === 'charset=utf-8');
}

/** The part of a fetch Request the context and Yoga's envelop plugins read. */
interface FastRequest {
  readonly method: 'POST';
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  readonly signal: AbortSignal;
}

/** What server.ts needs from the fast path. */
export interface HttpFastPath {
  /** Answers `req` when it is a request the fast path takes; false leaves it to Yoga. */
  tryAnswer(req: IncomingMessage, res: ServerResponse): boolean;
}

/** Options of {@link createHttpFastPath}. */
export interface HttpFastPathOptions {
  /** Yoga's body limit (the fast path leaves larger or unsized bodies to Yoga's refusal). */
  maxBodyBytes: number;
  /** With an allow-list every operation goes through Yoga's persisted-operations plugin. */
  persistedOperations: boolean;
  /** Runs the texts it has seen without envelop (null: envelop runs every operation). */
  preparedOperations: PreparedOperations | null;
  logger: pino.Logger;
}

// biome-ignore lint/suspicious/noExplicitAny: the gateway's Yoga instance, whatever its context types
type AnyYoga = YogaServerInstance<any, any>;

/** The fast path for one gateway. */
export function createHttpFastPath(yoga: AnyYoga, options: HttpFastPathOptions): HttpFastPath {
  const endpoint = yoga.graphqlEndpoint;
  if (options.persistedOperations) return { tryAnswer: () => false };
  // Read once: every property read through Yoga's server-adapter proxy returns a freshly bound function.
  const { getEnveloped, fetchAPI } = yoga;
  const yogaFetch = yoga.fetch;
  const operations = options.preparedOperations;

  /** Yoga's whole pipeline for a body already read. */
  const handToYoga = async (req: IncomingMessage, res: ServerResponse, body: string) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name === 'content-length') continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await yogaFetch(`http://${req.headers.host ?? 'localhost'}${req.url ?? endpoint}`, {
      method: 'POST',
      headers,
      body,
    });
    await send(res, response);
  };

  const run = async (req: IncomingMessage, res: ServerResponse, body: string, mediaType: JsonMediaType) => {
    let params: unknown;
    try {
      params = JSON.parse(body);
    } catch {
      return handToYoga(req, res, body);
    }
    if (!isRunnable(params)) return handToYoga(req, res, body);

    const signal = new OperationSignal();
    res.once('close', () => {
      if (!res.writableFinished) signal.abort(new DOMException('The client went away.', 'AbortError'));
    });
    const request: FastRequest = {
      method: 'POST',
      url: `http://${req.headers.host ?? 'localhost'}${req.url}`,
      headers: { get: (name) => headerValue(req, name) },
      signal: signal.asAbortSignal(),
    };
    const context = { request, params };
    // A text seen before runs prepared (compiled/prepared-operations.ts): no envelop at all.
    let prepared = operations?.get(params.query, params.operationName);
    let execution: (() => Promise<PreparedResult>) | undefined;
    if (!prepared) {
      // First sight of this text, or one envelop runs: parse and validate through envelop's hooks.
      const enveloped = getEnveloped(context);
      let document: DocumentNode;
      try {
        document = enveloped.parse(params.query);
        // Limits refuse by throwing from parse or validate; other problems come back as errors.
        if (enveloped.validate(enveloped.schema, document).length > 0) return handToYoga(req, res, body);
      } catch {
        return handToYoga(req, res, body);
      }
      if (getOperationAST(document, params.operationName)?.operation === 'subscription') {
        return handToYoga(req, res, body);
      }
      if (prepared === undefined && operations) {
        prepared = operations.prepare(params.query, params.operationName, document);
      }
      if (!prepared) {
        execution = async () =>
          (await enveloped.execute({
            schema: enveloped.schema,
            document,
            contextValue: await enveloped.contextFactory(),
            variableValues: params.variables,
            operationName: params.operationName,
          })) as ExecutionResult;
      }
    }

    let result: PreparedResult;
    try {
      result = prepared
        ? await (operations as PreparedOperations).run(prepared, context)
        : await (execution as () => Promise<PreparedResult>)();
    } catch (error) {
      if (res.destroyed) return;
      result = { errors: [masked(error, options.logger)] };
    }
    if (res.destroyed) return;
    if (!result.errors?.length && !result.extensions) {
      const stringify = result.stringify ?? JSON.stringify;
      // setHeader, not writeHead: end() then sends a Content-Length, as Yoga does, not a chunked body.
      res.setHeader('content-type', `${mediaType}; charset=utf-8`);
      // As bytes: Node prepends its header text to a string body, a copy of the whole answer made only
      // to be encoded again (~13 KB less allocated per list answer, bench/ab.ts --alloc-prof); a
      // Buffer goes out beside the header in the same corked write.
      res.end(Buffer.from(stringify(result)));
      return;
    }
    // Errors: Yoga's own processor decides the status and strips internal extensions.
    await send(res, await processRegularResult(result, fetchAPI, mediaType));
  };

  return {
    tryAnswer(req, res) {
      if (req.method !== 'POST' || req.url !== endpoint) return false;
      if (req.headers.origin !== undefined || !isJsonContentType(req.headers['content-type'])) return false;
      const length = Number(req.headers['content-length']);
      if (!Number.isSafeInteger(length) || length > options.maxBodyBytes || length === 0) return false;
      const mediaType = acceptedJsonMediaType(req.headers.accept);
      if (mediaType === null) return false;

      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.once('end', () => {
        const body =
          chunks.length === 1 ? (chunks[0] as Buffer).toString() : Buffer.concat(chunks).toString();
        run(req, res, body, mediaType).catch((error: unknown) => {
          // Only a fault of this module's own writing can land here: the operation's are in `result`.
          options.logger.error({ err: error }, 'yoga error');
          if (!res.headersSent) res.writeHead(500, { 'content-type': `${mediaType}; charset=utf-8` });
          res.end(JSON.stringify({ errors: [{ message: ERROR_CATALOGUE.INTERNAL_SERVER_ERROR.message }] }));
        });
      });
      return true;
    },
  };
}

/** The parameters of one operation the fast path runs: a query, optional variables and name, nothing else. */
function isRunnable(
  params: unknown,
): params is { query: string; variables?: Record<string, unknown> | null; operationName?: string | null } {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  for (const key in params) if (!PARAMETERS.has(key)) return false;
  const { query, variables, operationName } = params as Record<string, unknown>;
  if (typeof query !== 'string' || query === '') return false;
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return false;
  return operationName == null || typeof operationName === 'string';
}

/** Writes a fetch Response Yoga built (never a stream here: JSON answers only). */
async function send(res: ServerResponse, response: Response): Promise<void> {
  const text = await response.text();
  res.statusCode = response.status;
  for (const [name, value] of response.headers) res.setHeader(name, value);
  res.end(text);
}

function headerValue(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * What Yoga's handleError makes of an error thrown out of execute with `maskedErrors: true`: a coded
 * GraphQLError passes as is, anything else becomes "Unexpected error." (logged), via Yoga's own maskError.
 */
function masked(error: unknown, logger: pino.Logger): GraphQLError {
  const result = maskError(error, ERROR_CATALOGUE.INTERNAL_SERVER_ERROR.message);
  if (result !== error) logger.error({ err: error }, 'yoga error');
  return result instanceof GraphQLError
    ? result
    : createGraphQLError((result as Error).message, { originalError: result as Error });
}
