/**
 * Raw clients for the transport tests: a browser-like WebSocket upgrade (with `Origin`/`Host`
 * headers, as a page's `new WebSocket()` sends them), a graphql-ws client on such a socket, a raw SSE
 * request, and a raw TCP HTTP exchange for deadline tests.
 */
import { request as httpRequestRaw } from 'node:http';
import { connect, type Socket } from 'node:net';
import { type Client, createClient } from 'graphql-ws';
import { WebSocket } from 'ws';

/** What an upgrade attempt got: 101 (open, then closed by us) or the refusal's status and body. */
export interface UpgradeOutcome {
  status: number;
  body: string;
}

/** Attempts a graphql-transport-ws upgrade with the given headers; closes the socket if it opened. */
export function tryUpgrade(httpUrl: string, headers: Record<string, string>): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(httpUrl.replace(/^http/, 'ws'), 'graphql-transport-ws', { headers });
    socket.once('open', () => {
      socket.close();
      resolve({ status: 101, body: '' });
    });
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    socket.once('error', (error) => {
      // ws emits an error after unexpected-response when the request is aborted; ignore that one.
      if (!String(error.message).includes('Unexpected server response')) reject(error);
    });
  });
}

/** A graphql-ws client whose upgrade request carries `headers` (e.g. a browser's Origin). Dispose it. */
export function wsClientWithHeaders(
  httpUrl: string,
  headers: Record<string, string>,
  connectionParams: Record<string, unknown> = {},
): Client {
  class HeaderSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  return createClient({
    url: httpUrl.replace(/^http/, 'ws'),
    webSocketImpl: HeaderSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  });
}

/** Runs one operation over graphql-ws and resolves with its single result. */
export function runOverWs(client: Client, query: string): Promise<{ data?: unknown; errors?: unknown[] }> {
  return new Promise((resolve, reject) => {
    let result: { data?: unknown; errors?: unknown[] } | undefined;
    client.subscribe(
      { query },
      {
        next: (value) => {
          result = value as typeof result;
        },
        error: reject,
        complete: () => (result ? resolve(result) : reject(new Error('no result'))),
      },
    );
  });
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
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
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

/** How a raw graphql-ws `connection_init` ended: acknowledged (socket left open) or closed. */
export interface InitOutcome {
  socket: WebSocket;
  acknowledged: boolean;
  closeCode?: number;
  closeReason?: string;
}

/** Opens a graphql-transport-ws socket and sends `connection_init`; the caller closes the socket. */
export function initSocket(httpUrl: string, payload: Record<string, unknown>): Promise<InitOutcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(httpUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload })));
    socket.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === 'connection_ack')
        resolve({ socket, acknowledged: true });
    });
    socket.once('close', (code, reason) =>
      resolve({ socket, acknowledged: false, closeCode: code, closeReason: String(reason) }),
    );
    socket.once('error', reject);
  });
}
