/**
 * Deadlines for slow clients, set on node:http instead of left at Node's defaults (headers 60 s,
 * whole request 300 s, both checked only every 30 s: slow headers were cut after ~87 s, a trickling
 * body held a connection for five minutes). The header deadline bounds the time to send the request
 * line and headers; the request deadline bounds the whole request, body included. Neither touches an
 * answer being streamed (SSE), which starts once the request is complete.
 *
 * Node answers a missed deadline with a bare `408` and no body; the `clientError` handler here answers
 * with the gateway's coded JSON instead and keeps Node's own answers for other client errors.
 */

import { type Server, type ServerOptions, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RefusalCode, refusalBody, refusalStatus } from '../../errors.ts';

/** Default of `HEADERS_TIMEOUT_MS`: ample for any real client, short for a slowloris. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Default of `REQUEST_TIMEOUT_MS`: a 1 MiB body at ~35 KB/s still arrives. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Code of a request whose headers or body did not arrive in time (HTTP 408). */
const REQUEST_TIMEOUT = 'REQUEST_TIMEOUT' satisfies RefusalCode;

/** Deadlines of incoming requests; 0 turns one off. */
export interface RequestTimeouts {
  /** Request line and headers. @default DEFAULT_HEADERS_TIMEOUT_MS */
  headersTimeoutMs: number;
  /** The whole request, body included; at least `headersTimeoutMs` when both are on. @default DEFAULT_REQUEST_TIMEOUT_MS */
  requestTimeoutMs: number;
}

/**
 * `createServer` options enforcing `timeouts`. Node checks deadlines on an interval (30 s by default,
 * which made the cut land anywhere up to 30 s late); a quarter of the shorter deadline, at most 1 s,
 * keeps a cut within 25% of its setting.
 */
export function requestTimeoutServerOptions(timeouts: RequestTimeouts): ServerOptions {
  const active = [timeouts.headersTimeoutMs, timeouts.requestTimeoutMs].filter((ms) => ms > 0);
  const shortest = active.length > 0 ? Math.min(...active) : 0;
  return {
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    ...(shortest > 0
      ? { connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(shortest / 4))) }
      : {}),
  };
}

/** Node's own answers (lib/_http_server.js) for the client errors this handler does not code. */
const NODE_ANSWERS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/**
 * Answers a missed deadline with `408` and a coded body naming which deadline passed; other client
 * errors get Node's default answers. Installing a `clientError` listener replaces Node's handler, so
 * this one does all it did.
 */
export function answerClientErrors(server: Server, timeouts: RequestTimeouts): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !pending?.headersSent) {
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        // A response object exists once the headers were read: then it was the body that was late.
        const message = pending
          ? `The request body did not arrive within REQUEST_TIMEOUT_MS (${timeouts.requestTimeoutMs} ms).`
          : `The request headers did not arrive within HEADERS_TIMEOUT_MS (${timeouts.headersTimeoutMs} ms).`;
        const body = refusalBody(REQUEST_TIMEOUT, message);
        const status = refusalStatus(REQUEST_TIMEOUT);
        socket.write(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
            `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
      } else if (error.code !== 'ECONNRESET') {
        socket.write(NODE_ANSWERS[error.code ?? ''] ?? BAD_REQUEST);
      }
    }
    socket.destroy(error);
  });
}
