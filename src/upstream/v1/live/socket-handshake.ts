/**
 * One attempt to open a conversation's event WebSocket on its agent server
 * (`/sockets/events/{id}`, agent server `openhands_agent_server/sockets.py`; docs/upstream-facts.md,
 * "V1: the agent server's event WebSocket"), authenticated with that
 * conversation's `session_api_key`, and how it ended before any event: open (with its first frame,
 * the connect state), refused before accept (an HTTP answer, 403 for a refused key), closed after
 * accept (4001, 4004, 1013) or failed on the transport.
 *
 * Authentication, per agent server, in the order the brief of issue 24 asks:
 * - the `X-Session-API-Key` header (agent server v1.12.0+): no secret in the URL;
 * - the first-message `{"type":"auth","session_api_key"}` (v1.18.1+) only when the header is not
 *   honoured: the server accepted the socket but sends nothing within `authProbeMs` (it did not see
 *   the header, e.g. a proxy dropped it, and waits for that frame), so the frame goes on the same socket;
 * - the deprecated query parameter only for servers too old for both: a 403 to the header means a
 *   wrong key or a server that reads only the parameter; one try with it tells them apart.
 * The URL with the parameter is never logged, and no error made here carries it.
 */
import { WebSocket } from 'ws';

/** How a socket presents the key. */
export type AuthMode = 'header' | 'message' | 'query';

/** Where a conversation's agent server is: sent only that conversation's key. */
export interface AgentSocketTarget {
  /** `conversation_url`: `<agent server>[/prefix]/api/conversations/<id>`, absolute. */
  conversationUrl: string;
  sessionApiKey: string;
}

/** How one attempt ended. */
export type OpenOutcome =
  | {
      kind: 'open';
      socket: WebSocket;
      /** The connect state (`full_state`, or `execution_status` when the conversation is not loaded). */
      first: unknown;
      /** How the key was accepted: remembered for the agent server's next socket. */
      mode: AuthMode;
      /** Hands every later frame to `onFrame`, the ones that already arrived first. */
      listen(onFrame: (frame: unknown) => void): void;
    }
  | { kind: 'refused'; status: number }
  | { kind: 'closed'; code: number }
  | { kind: 'failed' };

/** The timeouts of one attempt. */
export interface AttemptTimeouts {
  connectTimeoutMs: number;
  authProbeMs: number;
}

/** Frames above this are a broken or hostile server (a full_state with a large agent is < 1 MiB). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** The socket's URL: the agent server's root (with its prefix) + `/sockets/events/<id>`. */
function eventSocketUrl(target: AgentSocketTarget, conversationId: string): URL {
  const url = new URL(target.conversationUrl);
  const match = /^(.*)\/api\/conversations\/([^/]+)\/?$/.exec(url.pathname);
  const prefix = match ? match[1] : '';
  const id = match ? match[2] : conversationId;
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${prefix}/sockets/events/${id}`;
  url.search = '';
  url.hash = '';
  return url;
}

/**
 * Opens the socket with `mode` (the one this agent server accepted last time, `header` at first),
 * falling back as the module comment says. Never rejects.
 */
export async function openAgentSocket(
  target: AgentSocketTarget,
  conversationId: string,
  mode: AuthMode,
  timeouts: AttemptTimeouts,
): Promise<OpenOutcome> {
  const outcome = await attempt(target, conversationId, mode, timeouts);
  if (outcome.kind === 'refused' && outcome.status === 403 && mode === 'header') {
    return attempt(target, conversationId, 'query', timeouts);
  }
  return outcome;
}

function attempt(
  target: AgentSocketTarget,
  conversationId: string,
  initialMode: AuthMode,
  timeouts: AttemptTimeouts,
): Promise<OpenOutcome> {
  let mode = initialMode;
  const url = eventSocketUrl(target, conversationId);
  if (mode === 'query') url.searchParams.set('session_api_key', target.sessionApiKey);
  const authFrame = JSON.stringify({ type: 'auth', session_api_key: target.sessionApiKey });
  return new Promise((resolve) => {
    const socket = new WebSocket(url, {
      headers: mode === 'header' ? { 'X-Session-API-Key': target.sessionApiKey } : {},
      handshakeTimeout: timeouts.connectTimeoutMs,
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
    });
    // Always listened to: `ws` throws an unhandled 'error' otherwise (the owner adds its own).
    socket.on('error', () => settle({ kind: 'failed' }));
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let onFrame: ((frame: unknown) => void) | null = null;
    const early: unknown[] = [];
    const settle = (outcome: OpenOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (outcome.kind !== 'open') socket.terminate();
      resolve(outcome);
    };
    socket.on('unexpected-response', (_request, response) => {
      response.resume();
      settle({ kind: 'refused', status: response.statusCode ?? 0 });
    });
    socket.on('close', (code) => settle({ kind: 'closed', code }));
    socket.on('open', () => {
      if (mode === 'message') socket.send(authFrame);
      const silentFor = mode === 'header' ? timeouts.authProbeMs : timeouts.connectTimeoutMs;
      timer = setTimeout(() => {
        if (mode !== 'header') {
          settle({ kind: 'failed' });
          return;
        }
        // Accepted yet silent: the header did not reach the server, which waits for the auth frame.
        mode = 'message';
        socket.send(authFrame);
        timer = setTimeout(() => settle({ kind: 'failed' }), timeouts.connectTimeoutMs);
      }, silentFor);
    });
    // One listener for the whole life of the socket: `ws` may emit several frames in one turn, so
    // frames after the first are kept until the owner listens, never lost between the two.
    socket.on('message', (data, isBinary) => {
      const frame = isBinary ? undefined : parseFrame(String(data));
      if (!settled) {
        settle({
          kind: 'open',
          socket,
          first: frame,
          mode,
          listen(handler) {
            onFrame = handler;
            for (const kept of early.splice(0)) handler(kept);
          },
        });
      } else if (onFrame) onFrame(frame);
      else early.push(frame);
    });
  });
}

function parseFrame(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
