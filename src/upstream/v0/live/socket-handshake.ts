/**
 * Opening one conversation socket the way the upstream's web client does, and reading a failed
 * handshake: a refusal (the server said no, with a reason) becomes a coded BridgeError; a transport
 * failure (could not talk at all) is left to the caller to retry.
 */
import { io, type Socket } from 'socket.io-client';
import { BridgeError } from '../../port/bridge-error.ts';
import type { SocketTarget } from '../socket-target.ts';

/** A connect refusal (server said no) as opposed to a transport failure (could not talk at all). */
export function isRefusal(error: Error & { type?: string; data?: unknown }): boolean {
  return (
    error.type !== 'TransportError' && error.message !== 'timeout' && error.message !== 'websocket error'
  );
}

/** The code a subscriber or action ends with when the upstream refused the handshake with `message`. */
export function refusalToError(message: string): BridgeError {
  if (message === 'invalid_session_api_key') {
    return new BridgeError('UNAUTHENTICATED');
  }
  if (message === 'Settings not found') {
    return new BridgeError('UPSTREAM_ERROR', 'The conversation service has no settings for this user.', {
      msgId: 'CONFIGURATION$SETTINGS_NOT_FOUND',
    });
  }
  // Other refusal texts may embed upstream internals: keep them out of the message.
  return new BridgeError(
    'CONVERSATION_UNREACHABLE',
    'The conversation service refused to open the conversation.',
  );
}

/** Opens one conversation socket the way the upstream web client does (websocket only, no auth payload). */
export function openSocket(
  target: SocketTarget,
  conversationId: string,
  latestEventId: number,
  timeoutMs: number,
): Socket {
  return io(target.origin, {
    path: target.path,
    transports: ['websocket'],
    // Reconnection is the bridge's job: it must change latest_event_id and count attempts itself.
    reconnection: false,
    forceNew: true,
    timeout: timeoutMs,
    query: {
      conversation_id: conversationId,
      latest_event_id: String(latestEventId),
      session_api_key: target.sessionApiKey,
    },
    extraHeaders: target.headers,
  });
}
