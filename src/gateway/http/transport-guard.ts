/**
 * gateway/http/: serving GraphQL over node:http. This room holds the checks every connection passes
 * before Yoga or graphql-ws (this file), how a caller presents a credential (credentials.ts), the
 * fast path for JSON POSTs (http-fast-path.ts), slow-client deadlines (request-timeouts.ts) and the
 * SSE stall cut (sse-stall.ts). It may import protection/ only.
 *
 * The checks server.ts runs on connections before Yoga or graphql-ws see them: Host and Origin
 * (origin-check.ts), the per-credential cap on sockets and SSE streams (stream-quota.ts), the SSE
 * stall cut (sse-stall.ts) and the request deadlines (request-timeouts.ts). One object built from the
 * gateway's options, so server.ts only calls it at the three places where a connection arrives: an
 * HTTP request, a WebSocket upgrade, a graphql-ws `connection_init`.
 */
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type pino from 'pino';
import type { WebSocket } from 'ws';
import { type RefusalCode, refusalBody, refusalStatus } from '../../errors.ts';
import { CREDENTIAL_HEADERS, type UpstreamCredentials } from '../../upstream/credentials.ts';
import { defaultAllowedHosts, OriginPolicy, type OriginRefusal } from '../protection/origin-check.ts';
import {
  DEFAULT_MAX_STREAMS_PER_CREDENTIAL,
  StreamQuota,
  TOO_MANY_STREAMS,
  TOO_MANY_STREAMS_CLOSE_CODE,
} from '../protection/stream-quota.ts';
import { credentialsFromHeaders } from './credentials.ts';
import {
  answerClientErrors,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type RequestTimeouts,
  requestTimeoutServerOptions,
} from './request-timeouts.ts';
import { DEFAULT_SSE_STALL_TIMEOUT_MS, SseStallGuard } from './sse-stall.ts';

/** Transport limits of a listening gateway; every field has a documented default. */
export interface TransportLimits {
  /**
   * `ALLOWED_HOSTS`: host names accepted in `Host` on /graphql; `['*']` accepts any; null or absent
   * means the default (what the config yields when the setting is not given).
   * @default loopback names + the listen host when listening on loopback or a default key is configured, else any
   */
  allowedHosts?: readonly string[] | null;
  /** `HEADERS_TIMEOUT_MS`. @default DEFAULT_HEADERS_TIMEOUT_MS (10 s) */
  headersTimeoutMs?: number;
  /** `REQUEST_TIMEOUT_MS`: whole request, body included. @default DEFAULT_REQUEST_TIMEOUT_MS (30 s) */
  requestTimeoutMs?: number;
  /** `SSE_STALL_TIMEOUT_MS`; 0 off. @default DEFAULT_SSE_STALL_TIMEOUT_MS (12 s) */
  sseStallTimeoutMs?: number;
  /** `MAX_STREAMS_PER_CREDENTIAL`: sockets + SSE streams; 0 off. @default DEFAULT_MAX_STREAMS_PER_CREDENTIAL */
  maxStreamsPerCredential?: number;
}

/** What the guard needs from the gateway's options. */
export interface TransportGuardOptions extends TransportLimits {
  /** `CORS_ORIGINS`. */
  corsOrigins: readonly string[];
  defaultSessionApiKey: string | null | undefined;
  /** The listen host (allowed by the Host check). */
  listenHost: string;
  /** The GraphQL path: the Host check and the stream rules apply there. */
  endpoint: string;
  logger: pino.Logger;
}

/** True for a request that asks for an SSE answer. */
function wantsEventStream(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').toLowerCase().includes('text/event-stream');
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** ws's `verifyClient` callback. */
type VerifyCallback = (
  verified: boolean,
  code?: number,
  message?: string,
  headers?: Record<string, string>,
) => void;

/** Builds the guard. */
export function createTransportGuard(options: TransportGuardOptions) {
  const policy = new OriginPolicy({
    corsOrigins: options.corsOrigins,
    allowedHosts:
      options.allowedHosts ?? defaultAllowedHosts(Boolean(options.defaultSessionApiKey), options.listenHost),
  });
  const timeouts: RequestTimeouts = {
    headersTimeoutMs: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  const quota = new StreamQuota(options.maxStreamsPerCredential ?? DEFAULT_MAX_STREAMS_PER_CREDENTIAL);
  const stalls = new SseStallGuard(options.sseStallTimeoutMs ?? DEFAULT_SSE_STALL_TIMEOUT_MS, () =>
    options.logger.warn({ transport: 'sse' }, 'SSE stream cut: its reader stopped reading'),
  );
  const resolve = (presented: UpstreamCredentials | null): UpstreamCredentials =>
    presented ??
    (options.defaultSessionApiKey
      ? { kind: 'session-api-key', key: options.defaultSessionApiKey }
      : { kind: 'none' });

  const answer = (res: ServerResponse, refusal: { code: RefusalCode; message: string }) => {
    const body = refusalBody(refusal.code, refusal.message);
    res.writeHead(refusalStatus(refusal.code), {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };

  return {
    /** The Host/Origin policy (tests). */
    policy,
    /** The per-credential cap (tests, diagnostics). */
    quota,
    /** Options for `createServer`: the request deadlines. */
    serverOptions: requestTimeoutServerOptions(timeouts) satisfies ServerOptions,

    /** Installs the coded 408 answers on `server`. */
    install(server: Server): void {
      answerClientErrors(server, timeouts);
    },

    /**
     * Checks an HTTP request; answers and returns true when it is refused. An SSE request that passes
     * holds one of its credential's slots until its response closes and is watched for stalls.
     */
    refuseRequest(req: IncomingMessage, res: ServerResponse): boolean {
      if (pathOf(req) !== options.endpoint) return false;
      const headers = { host: req.headers.host, origin: req.headers.origin };
      const hostRefusal = policy.checkHost(headers.host);
      if (hostRefusal) {
        answer(res, hostRefusal);
        return true;
      }
      if (!wantsEventStream(req)) return false;
      const originRefusal = policy.checkOrigin(headers.origin, headers.host);
      if (originRefusal) {
        answer(res, originRefusal);
        return true;
      }
      let presented: UpstreamCredentials | null;
      try {
        presented = credentialsFromHeaders(headersOf(req));
      } catch {
        return false; // A malformed credential: Yoga answers it (401) without opening a stream.
      }
      const release = quota.acquire(resolve(presented));
      if (!release) {
        answer(res, {
          code: TOO_MANY_STREAMS,
          message: `At most ${quota.max} WebSocket connections and SSE streams may be open at once per credential.`,
        });
        return true;
      }
      res.once('close', release);
      stalls.watch(res);
      return false;
    },

    /** ws's `verifyClient`: Host and Origin, refused with 403 and a coded JSON body before the handshake. */
    verifyUpgrade(info: { req: IncomingMessage }, callback: VerifyCallback): void {
      const refusal: OriginRefusal | null = policy.check({
        host: info.req.headers.host,
        origin: info.req.headers.origin,
      });
      if (!refusal) {
        callback(true);
        return;
      }
      callback(false, refusal.status, refusalBody(refusal.code, refusal.message), {
        'Content-Type': 'application/json; charset=utf-8',
      });
    },

    /**
     * At `connection_init`: takes a slot for the socket's credential until it closes. False when the
     * credential holds its maximum; the socket is then closed with 4429 and a coded reason.
     */
    admitSocket(socket: WebSocket, presented: UpstreamCredentials | null): boolean {
      const release = quota.acquire(resolve(presented));
      if (!release) {
        socket.close(TOO_MANY_STREAMS_CLOSE_CODE, `${TOO_MANY_STREAMS}: at most ${quota.max} per credential`);
        return false;
      }
      // `on`, not `once`: ws emits 'close' once, and `once` adds a bound wrapper per socket.
      socket.on('close', release);
      return true;
    },

    /** Stops the stall timer. */
    close(): void {
      stalls.close();
    },
  };
}

/** The credential headers of a node request as a fetch Headers (what credentialsFromHeaders reads). */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const name of CREDENTIAL_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}
