/**
 * A hostile implementation of the conversation service's REST interface: a small node:http server on
 * 127.0.0.1 port 0 whose answers the test scripts per route. It answers what the bundled local service
 * never would but a newer release, a proxy or a broken deployment might: null and missing fields,
 * timestamps with offsets or without a zone, unknown enum values, bodies trickling one byte at a time,
 * connections cut before or in the middle of an answer.
 *
 *   await using upstream = await startHostileUpstream();
 *   upstream.on('GET', '/api/conversations', { json: searchPage([hostileRecord({ title: null })]) });
 *   upstream.on('GET', /^\/api\/conversations\/\w+$/, (request) => ({ json: ... }));
 *
 * Unscripted routes answer 404 `{"detail":"Not Found"}`; `GET /alive` answers `{"status":"ok"}`.
 * (Live events have their own double: hostile-socket-upstream.ts.)
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { conversationRecord } from './fixtures.ts';
import { closeOnce, listenOnLoopback, stopServer } from './loopback.ts';

/** What the double received (body parsed as JSON when it is JSON). */
interface HostileRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** One scripted answer. */
interface HostileReply {
  /** @default 200 */
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON. Keys whose value is `undefined` are left out: that is how a test sends a missing field. */
  json?: unknown;
  /** Sent as is instead of `json` (unreadable bodies). */
  text?: string;
  /** Headers at once, then the body `bytes` (default 1) at a time every `intervalMs`. */
  trickle?: { intervalMs: number; bytes?: number };
  /**
   * Destroy the connection: before any header, right after the headers, or after half the body.
   * A declared Content-Length makes the cut visible to the client as a broken answer.
   */
  cut?: 'before-headers' | 'after-headers' | 'mid-body';
  /** Never answer (the client's deadline must end the call). */
  hang?: boolean;
}

/** A reply, or a function of the request that makes one. */
type HostileScript = HostileReply | ((request: HostileRequest) => HostileReply);

/** A running hostile upstream. */
export interface HostileUpstream {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Every request received, in order. */
  requests: HostileRequest[];
  /** Scripts a route (method + exact path or a RegExp on the path). Later scripts win over earlier ones. */
  on(method: string, path: string | RegExp, script: HostileScript): void;
  /** Forgets every script and recorded request. */
  reset(): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface Route {
  method: string;
  path: string | RegExp;
  script: HostileScript;
}

/** Starts the double on 127.0.0.1, port 0. */
export async function startHostileUpstream(): Promise<HostileUpstream> {
  let routes: Route[] = [];
  const requests: HostileRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://double');
      const raw = Buffer.concat(chunks).toString('utf8');
      const request: HostileRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: parseJson(raw),
      };
      requests.push(request);
      const route = [...routes]
        .reverse()
        .find(
          (candidate) =>
            candidate.method === request.method &&
            (typeof candidate.path === 'string'
              ? candidate.path === request.path
              : candidate.path.test(request.path)),
        );
      let reply: HostileReply;
      if (route) reply = typeof route.script === 'function' ? route.script(request) : route.script;
      else if (request.path === '/alive') reply = { json: { status: 'ok' } };
      else reply = { status: 404, json: { detail: 'Not Found' } };
      answer(reply);
    });

    function answer(reply: HostileReply): void {
      if (reply.hang) return;
      if (reply.cut === 'before-headers') {
        req.socket.destroy();
        return;
      }
      const body = Buffer.from(reply.text ?? (reply.json === undefined ? '' : JSON.stringify(reply.json)));
      res.writeHead(reply.status ?? 200, {
        'content-type': 'application/json',
        'content-length': String(body.length),
        ...reply.headers,
      });
      if (reply.cut === 'after-headers') {
        res.flushHeaders();
        res.socket?.destroy();
        return;
      }
      if (reply.cut === 'mid-body') {
        res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
        return;
      }
      if (!reply.trickle) {
        res.end(body);
        return;
      }
      res.flushHeaders();
      const step = Math.max(1, reply.trickle.bytes ?? 1);
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed) {
          stop();
          return;
        }
        const next = body.subarray(sent, sent + step);
        sent += next.length;
        if (sent >= body.length) {
          stop();
          res.end(next);
        } else {
          res.write(next);
        }
      }, reply.trickle.intervalMs);
      timers.add(timer);
      const stop = () => {
        clearInterval(timer);
        timers.delete(timer);
      };
      res.on('close', stop);
    }
  });

  const url = await listenOnLoopback(server);
  const close = closeOnce(() => {
    for (const timer of timers) clearInterval(timer);
    timers.clear();
    return stopServer(server);
  });
  return {
    url,
    requests,
    on(method, path, script) {
      routes.push({ method, path, script });
    },
    reset() {
      routes = [];
      requests.length = 0;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

let nextId = 0;

/** A fresh 32-hex conversation id (unique within the test process). */
export function hostileId(): string {
  nextId++;
  return `${nextId.toString(16).padStart(8, '0')}${'c0ffee00'.repeat(3)}`;
}

/**
 * A well-formed wire record (as the real 0.53 server sends it), with `overrides` applied. Give a key
 * `undefined` to leave the field out, `null` to send null, anything else to send that.
 */
export function hostileRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = typeof overrides.conversation_id === 'string' ? overrides.conversation_id : hostileId();
  return {
    ...conversationRecord(id, {
      selected_repository: 'acme/widgets',
      selected_branch: 'main',
      git_provider: 'github',
      num_connections: 1,
      pr_number: [7],
    }),
    ...overrides,
  };
}

/** A search answer holding `records`. */
export function searchPage(records: unknown[], nextPageId: string | null = null) {
  return { results: records, next_page_id: nextPageId };
}
