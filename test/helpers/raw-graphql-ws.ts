/**
 * A graphql-transport-ws client on a raw `ws` socket, for tests that must send exactly the text they
 * mean (a variable too deep for JSON.stringify) and see every frame and the close code:
 *
 *   const socket = await RawGraphqlWs.open(gateway.url);
 *   socket.send('{"id":"1","type":"subscribe","payload":{"query":"{ __typename }"}}');
 *   await socket.until((messages) => messages.some((m) => m.id === '1' && m.type === 'complete'));
 */

import { vi } from 'vitest';
import { WebSocket } from 'ws';

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
