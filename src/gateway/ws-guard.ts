/**
 * graphql-ws closes a socket as an *internal* error (4500) when a client sends a well-formed message
 * of a type only servers send (`next`, `error`, ...) or one it cannot parse in some ways: a client
 * mistake reported as a server fault, with a console line per message. This guard checks every
 * incoming message against the protocol first and closes bad ones with 4400 (Bad Request), so 4500
 * is left for real faults.
 */
import { parseMessage } from 'graphql-ws';
import type { RawData, WebSocket, WebSocketServer } from 'ws';

/** Message types a client may send (graphql-transport-ws). */
const CLIENT_MESSAGE_TYPES = new Set(['connection_init', 'ping', 'pong', 'subscribe', 'complete']);

/** True when `text` is a protocol message a client may send. */
function isClientMessage(text: string): boolean {
  try {
    return CLIENT_MESSAGE_TYPES.has(parseMessage(text).type);
  } catch {
    return false;
  }
}

/**
 * Installs the guard. Call it before graphql-ws's `useServer`: listeners run in registration order,
 * so this one wraps each socket's `message` listeners before graphql-ws registers its own.
 */
export function guardClientMessages(wsServer: WebSocketServer): void {
  wsServer.on('connection', (socket: WebSocket) => {
    const on = socket.on.bind(socket);
    // Only `message` listeners are wrapped; everything else goes straight through.
    socket.on = ((event: string, listener: (...args: unknown[]) => void) => {
      if (event !== 'message') return on(event as 'close', listener as () => void);
      return on('message', (data: RawData, isBinary: boolean) => {
        if (!isClientMessage(String(data))) {
          socket.close(4400, 'Invalid message received');
          return;
        }
        listener(data, isBinary);
      });
    }) as typeof socket.on;
  });
}
