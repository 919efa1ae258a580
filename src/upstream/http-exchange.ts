/**
 * One attempt on the wire: the request's headers (accept, the caller's credential, JSON content type)
 * and body, the attempt's deadline, reading the whole answer and turning it into parsed JSON, a
 * rejection the caller interprets itself, or a coded error (failures.ts). Admission, retries and
 * instrumentation happen around it, in http.ts.
 */
import type { Dispatcher } from 'undici';
import { AttemptDeadline } from './attempt-deadline.ts';
import { BufferedAnswer } from './buffered-answer.ts';
import { type UpstreamCredentials, writeCredentialHeaders } from './credentials.ts';
import {
  attemptTimeout,
  mapStatus,
  mapTransportError,
  routeMissing,
  UpstreamRejection,
  unreadableAnswer,
} from './failures.ts';

/** One upstream call. */
export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path with query already encoded. */
  path: string;
  credentials: UpstreamCredentials;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is instead of `body` (a multipart upload, multipart.ts), with its content type. */
  rawBody?: { bytes: Uint8Array; contentType: string };
  signal?: AbortSignal | undefined;
  /** Status codes handed back as {@link UpstreamRejection} instead of being mapped here. */
  passThroughStatuses?: readonly number[];
  /**
   * The route as `METHOD /path/{param}`. When set, an answer that says the upstream has no such route
   * (the web UI's page on a 2xx, a 405, or a 404 unless 404 is passed through) is UPSTREAM_ROUTE_MISSING
   * naming it, instead of a parse error or UPSTREAM_ERROR. V0 calls leave it unset (unchanged).
   */
  route?: string;
}

/** Where and how long one attempt may take. */
export interface ExchangeTarget {
  dispatcher: Dispatcher;
  origin: string;
  /** The whole attempt's budget in ms: connect, headers and body together. */
  timeoutMs: number;
}

/**
 * Sends `req` once and returns the parsed JSON body of a 2xx answer; `answered` learns the status as
 * soon as the headers arrive (the breaker and instrumentation need it even when the body then fails).
 * The body is collected by a dispatch handler that is also the attempt's deadline (buffered-answer.ts).
 * @throws UpstreamError for transport failures, unmapped statuses and unparseable bodies
 * @throws UpstreamRejection for statuses listed in `passThroughStatuses`
 */
export function exchange<T>(
  target: ExchangeTarget,
  req: UpstreamRequest,
  answered: (status: number) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // Before the deadline is armed: a body that cannot be written (JSON.stringify throws) arms nothing.
    const { headers: requestHeaders, body } = requestParts(req, 'application/json');
    const handler = new BufferedAnswer(
      {
        headersArrived: answered,
        completed: ({ status, headers, text }) => {
          const refusal = answerRefusal(req, status, headers, text);
          if (refusal) reject(refusal);
          else settleParsed(resolve, reject, text, status);
        },
        failed: (error, abort) => reject(mapTransportError(error, abort)),
      },
      req.signal,
      target.timeoutMs,
      attemptTimeout,
    );
    try {
      target.dispatcher.dispatch(
        { origin: target.origin, method: req.method, path: req.path, headers: requestHeaders, body },
        handler,
      );
    } catch (error) {
      // A dispatcher that throws instead of reporting to the handler still ends the attempt (and its timer).
      handler.onResponseError(undefined, error);
    }
  });
}

/** Resolves with the parsed body, or rejects with the coded error of one that is not JSON. */
function settleParsed<T>(
  resolve: (value: T) => void,
  reject: (error: unknown) => void,
  text: string,
  status: number,
): void {
  let parsed: T;
  try {
    parsed = parseJson<T>(text, status);
  } catch (error) {
    reject(error);
    return;
  }
  resolve(parsed);
}

/**
 * Sends `req` and answers once its headers arrive, with the attempt's deadline (connect, headers and
 * whatever of the body the caller reads: undici's own timeouts bound idle gaps only), which the caller
 * disposes of when done. A failure before the headers is coded (failures.ts), its deadline disposed of.
 */
export async function send(
  target: ExchangeTarget,
  req: UpstreamRequest,
  accept: string,
): Promise<{ response: Dispatcher.ResponseData; deadline: AttemptDeadline }> {
  const { headers, body } = requestParts(req, accept);
  const deadline = new AttemptDeadline(req.signal, target.timeoutMs, attemptTimeout);
  try {
    const response = await target.dispatcher.request({
      origin: target.origin,
      method: req.method,
      path: req.path,
      headers,
      body,
      signal: deadline.signal,
    });
    return { response, deadline };
  } catch (error) {
    deadline.dispose();
    throw mapTransportError(error, deadline.signal);
  }
}

/** The headers and body of `req` on the wire: `accept`, the caller's credential, the body's type. */
function requestParts(
  req: UpstreamRequest,
  accept: string,
): { headers: Record<string, string>; body: string | Uint8Array | undefined } {
  const headers: Record<string, string> = { accept };
  writeCredentialHeaders(headers, req.credentials);
  if (req.rawBody !== undefined) {
    headers['content-type'] = req.rawBody.contentType;
    return { headers, body: req.rawBody.bytes };
  }
  if (req.body === undefined) return { headers, body: undefined };
  headers['content-type'] = 'application/json';
  return { headers, body: JSON.stringify(req.body) };
}

/**
 * What an answer that is not the route's own becomes (null when it is one: a 2xx that is no web page
 * on a named route): UPSTREAM_ROUTE_MISSING, an {@link UpstreamRejection} for a status passed through
 * (`text` parsed when it is JSON), or the status's coded error. The body is never copied into an error.
 */
export function answerRefusal(
  req: UpstreamRequest,
  status: number,
  headers: Dispatcher.ResponseData['headers'],
  text: string,
): Error | null {
  if (req.route !== undefined && saysRouteMissing(status, headers['content-type'], req)) {
    return routeMissing(req.route, status);
  }
  if (status >= 200 && status < 300) return null;
  if (req.passThroughStatuses?.includes(status)) return new UpstreamRejection(status, safeParse(text));
  return mapStatus(status, headers['retry-after']);
}

/** A web page where JSON was expected, a 405, or a 404 the caller does not read itself: no such route. */
function saysRouteMissing(
  status: number,
  contentType: string | string[] | undefined,
  req: UpstreamRequest,
): boolean {
  if (status >= 200 && status < 300) return String(contentType ?? '').includes('text/html');
  // A 405 is never an answer about the input: the path exists for other methods only.
  if (status === 405) return true;
  return status === 404 && !req.passThroughStatuses?.includes(404);
}

function parseJson<T>(text: string, status: number): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw unreadableAnswer(status);
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
