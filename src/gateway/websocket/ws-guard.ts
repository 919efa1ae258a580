/**
 * graphql-ws closes a socket as an *internal* error (4500) when a client sends a well-formed message
 * of a type only servers send (`next`, `error`, ...) or one it cannot parse in some ways: a client
 * mistake reported as a server fault, with a console line per message. This guard checks every
 * incoming message against the protocol first and closes bad ones with 4400 (Bad Request), so 4500
 * is left for real faults. The graphql-ws binding checks each message with {@link clientMessage}
 * before graphql-ws sees it.
 */
import { parseMessage } from 'graphql-ws';

/** Message types a client may send (graphql-transport-ws). */
const CLIENT_MESSAGE_TYPES = new Set(['connection_init', 'ping', 'pong', 'subscribe', 'complete']);

/**
 * The client message in `text`, or null when it is not a protocol message a client may send (the
 * binding closes the socket with 4400 then; graphql-ws-binding.ts).
 */
export function clientMessage(text: string): { type: string; id?: string } | null {
  try {
    const message = parseMessage(text) as { type: string; id?: string };
    return CLIENT_MESSAGE_TYPES.has(message.type) ? message : null;
  } catch {
    return null;
  }
}
