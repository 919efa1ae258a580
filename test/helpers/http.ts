/**
 * Raw HTTP for tests that look at what goes over the wire: a GraphQL POST answering status, headers and
 * the parsed body (or the text when it is not JSON), the error codes of such an answer, one metric read
 * from /metrics, node:http requests that set `Host` as a browser would, and raw TCP exchanges for
 * deadline tests. (The local service's REST client is `rest` in local-service.ts.)
 */
import { request as httpRequestRaw } from 'node:http';
import { connect, type Socket } from 'node:net';
import { text as readText } from 'node:stream/consumers';

/** A raw answer of the gateway. */
export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON, or undefined. */
  json:
    | {
        data?: Record<string, unknown> | null;
        errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
      }
    | undefined;
}

/** POSTs a body (an object is JSON-encoded, a string is sent as is) to the gateway. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<RawAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  const text = await response.text();
  let json: RawAnswer['json'];
  try {
    json = JSON.parse(text) as RawAnswer['json'];
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** The `extensions.code`s of an answer's errors. */
export function codes(answer: RawAnswer): unknown[] {
  return (answer.json?.errors ?? []).map((error) => error.extensions?.code);
}

/** Reads one metric (summed over label sets matching `labels`) from the gateway's /metrics. */
export async function metric(
  graphqlUrl: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(new URL('/metrics', graphqlUrl))).text();
  let total = 0;
  let found = false;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const set = match[2] ?? '';
    if (!Object.entries(labels).every(([key, value]) => set.includes(`${key}="${value}"`))) continue;
    total += Number(match[3]);
    found = true;
  }
  return found ? total : Number.NaN;
}

/** Opens a raw TCP connection to the gateway's port. */
export function rawConnection(httpUrl: string): Promise<Socket> {
  const url = new URL(httpUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the peer sends until it closes the connection (bounded by `timeoutMs`, then rejects). */
export function readUntilClosed(socket: Socket, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connection still open after ${timeoutMs} ms; received ${text.length} chars`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.on('error', () => {});
    socket.resume();
  });
}

/** Status line, headers and body of a raw HTTP/1.1 answer. */
export function parseRawAnswer(text: string): { status: number; body: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, body };
}

/**
 * A request through node:http, which (unlike fetch) lets a test set `Host` as a rebinding page's
 * browser would send it. Answers status and body text.
 */
export function httpRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequestRaw(
      url,
      { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false },
      (response) => {
        readText(response).then((body) => resolve({ status: response.statusCode ?? 0, text: body }), reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/** POSTs a GraphQL query with node:http (see {@link httpRequest}). */
export function postWithHost(url: string, query: string, host: string) {
  return httpRequest(url, {
    method: 'POST',
    headers: { host, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });
}
