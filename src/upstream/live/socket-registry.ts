/**
 * The registry of one adapter's shared sockets, one per (conversation, credential): find or open a
 * conversation's socket for a caller, forget one once it closed itself, end every stream of a
 * conversation, close them all on shutdown. What a socket does: shared-socket.ts.
 */
import { createHash } from 'node:crypto';
import { credentialSecret, type UpstreamCredentials } from '../credentials.ts';
import { BridgeError } from '../port/bridge-error.ts';

/** What the registry needs of a socket. */
export interface RegisteredSocket {
  /** The conversation id as the adapter keys it. */
  readonly conversationId: string;
  /** Ends its streams with `error` and closes it (the gateway deleted or stopped the conversation). */
  endWith(error: BridgeError): void;
  /** Ends its streams (they complete) and closes it and its timers: the gateway shuts down. */
  shutdown(): void;
}

export class SocketRegistry<S extends RegisteredSocket> {
  readonly #sockets = new Map<string, S>();
  #closed = false;

  /** Sockets alive, including ones reconnecting. */
  get size(): number {
    return this.#sockets.size;
  }

  /**
   * The socket of this conversation and credential, opened with `open(key)` when there is none.
   * @throws BridgeError GATEWAY_SHUTTING_DOWN once closed
   */
  socketFor(conversationId: string, credentials: UpstreamCredentials, open: (key: string) => S): S {
    if (this.#closed) throw new BridgeError('GATEWAY_SHUTTING_DOWN');
    const key = socketKey(conversationId, credentials);
    let socket = this.#sockets.get(key);
    if (!socket) {
      socket = open(key);
      this.#sockets.set(key, socket);
    }
    return socket;
  }

  /** How many sockets pass `test`. */
  count(test: (socket: S) => boolean): number {
    let count = 0;
    for (const socket of this.#sockets.values()) if (test(socket)) count++;
    return count;
  }

  /** The socket of this conversation and credential, if one is open or opening. */
  find(conversationId: string, credentials: UpstreamCredentials): S | undefined {
    return this.#sockets.get(socketKey(conversationId, credentials));
  }

  /** Called by a socket once it is fully closed (a newer socket under the same key stays). */
  forget(key: string, socket: S): void {
    if (this.#sockets.get(key) === socket) this.#sockets.delete(key);
  }

  /** Ends every stream of the conversation, whatever the credential, with `error`. */
  endConversation(conversationId: string, error: BridgeError): void {
    for (const socket of [...this.#sockets.values()]) {
      if (socket.conversationId === conversationId) socket.endWith(error);
    }
  }

  /** Ends every stream and closes every socket; opening another is refused from now on. */
  close(): void {
    this.#closed = true;
    for (const socket of [...this.#sockets.values()]) socket.shutdown();
    this.#sockets.clear();
  }
}

/** Map key without the secret in it: a digest of the credential (maps end up in heap dumps and debuggers). */
function socketKey(conversationId: string, credentials: UpstreamCredentials): string {
  // The kind and its secret: two access-token callers must never share a socket.
  const secret =
    credentials.kind === 'none' ? 'none' : `${credentials.kind}:${credentialSecret(credentials)}`;
  return `${conversationId}\u0000${createHash('sha256').update(secret).digest('base64url')}`;
}
