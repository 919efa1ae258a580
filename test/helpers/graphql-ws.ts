/**
 * graphql-ws for tests: a client (optionally with upgrade headers, as a browser page sends `Origin`),
 * a subscription drained into a Collector, one operation's single result, a raw upgrade attempt, a raw
 * `connection_init`, and a graphql-transport-ws client on a raw `ws` socket for tests that must send
 * exactly the text they mean (a variable too deep for JSON.stringify) and see every frame and close code:
 *
 *   const socket = await RawGraphqlWs.open(gateway.url);
 *   socket.send('{"id":"1","type":"subscribe","payload":{"query":"{ __typename }"}}');
 *   await socket.until((messages) => messages.some((m) => m.id === '1' && m.type === 'complete'));
 */
import { text as readText } from 'node:stream/consumers';
import { type Client, createClient, type SubscribePayload } from 'graphql-ws';
import { onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import { Collector } from './collector.ts';

/** Options of {@link wsClient}. */
export interface WsClientOptions {
  /** Sent in `connection_init` (credentials: `X-Session-API-Key`). @default {} */
  connectionParams?: Record<string, unknown>;
  /** Headers of the upgrade request (a browser's `Origin`, a rebinding page's `Host`). @default {} */
  headers?: Record<string, string>;
}

/**
 * A graphql-ws client on the gateway's `/graphql`, failing fast instead of retrying; disposed when the
 * current test finishes.
 */
export function wsClient(httpUrl: string, options: WsClientOptions = {}): Client {
  const headers = options.headers ?? {};
  class HeaderSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  const client = createClient({
    url: httpUrl.replace(/^http/, 'ws'),
    webSocketImpl: HeaderSocket,
    connectionParams: options.connectionParams ?? {},
    retryAttempts: 0,
    lazy: true,
  });
  onTestFinished(() => client.dispose());
  return client;
}

/**
 * One subscription on `client`, drained into a {@link Collector}; `leave()` returns the iterator (the
 * subscription completes), as happens anyway when the current test finishes.
 */
export function subscribeOverWs<T>(
  client: Client,
  request: SubscribePayload,
): Collector<T> & { leave(): Promise<void> } {
  const iterator = client.iterate(request);
  const leave = async () => {
    await iterator.return?.();
  };
  onTestFinished(leave);
  return Object.assign(new Collector(iterator as AsyncIterable<T>), { leave });
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
      readText(response).then((body) => resolve({ status: response.statusCode ?? 0, body }), reject);
    });
    socket.once('error', (error) => {
      // ws emits an error after unexpected-response when the request is aborted; ignore that one.
      if (!String(error.message).includes('Unexpected server response')) reject(error);
    });
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

/** One graphql-ws frame as received. */
export interface RawFrame {
  id?: string;
  type: string;
  payload?: unknown;
}

/** A graphql-transport-ws client on a raw `ws` socket: sends text as is, keeps every message it got. */
export class RawGraphqlWs {
  readonly messages: RawFrame[] = [];
  closeCode: number | null = null;
  readonly #socket: WebSocket;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on('message', (data) => this.messages.push(JSON.parse(String(data))));
    socket.on('close', (code) => {
      this.closeCode = code;
    });
  }

  /** Connects and completes the connection_init / connection_ack handshake. */
  static async open(httpUrl: string, connectionParams: Record<string, unknown> = {}): Promise<RawGraphqlWs> {
    const socket = new WebSocket(httpUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const client = new RawGraphqlWs(socket);
    client.send(JSON.stringify({ type: 'connection_init', payload: connectionParams }));
    await client.until((messages) => messages.some((m) => m.type === 'connection_ack'));
    return client;
  }

  /** Sends `text` as one frame, unchanged. */
  send(text: string): void {
    this.#socket.send(text);
  }

  /** Waits until `predicate(messages)` holds (or fails after 5 s, naming what arrived). */
  async until(predicate: (messages: RawGraphqlWs['messages']) => boolean): Promise<RawGraphqlWs['messages']> {
    await vi.waitFor(
      () => {
        if (!predicate(this.messages) && this.closeCode === null)
          throw new Error(`condition not met; got ${JSON.stringify(this.messages).slice(0, 500)}`);
      },
      { timeout: 5000, interval: 20 },
    );
    if (!predicate(this.messages)) throw new Error(`socket closed with ${this.closeCode}`);
    return this.messages;
  }

  /** Closes the socket (1000) and waits for the close. */
  close(): Promise<void> {
    if (this.#socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.#socket.once('close', () => resolve());
      this.#socket.close();
    });
  }
}
