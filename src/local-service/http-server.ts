/**
 * The local service's HTTP transport on plain node:http: rate limit, auth, routing, bounded body
 * reading and JSON answers, for either face. Route logic lives in the faces' route tables (v0/routes.ts,
 * v1/routes.ts); nothing here knows about conversations.
 */
import http from 'node:http';
import type pino from 'pino';
import type { ApiResponse, Route } from './api-route.ts';
import { extractPresentedKey, type TenantId, type TenantResolver } from './auth.ts';
import type { RateLimiter } from './rate-limit.ts';
import { jsonInvalidIssue, missingBodyIssue } from './validation/json-body-issues.ts';

/** What the HTTP server needs. */
export interface HttpServerDeps {
  routes: Route[];
  resolveTenant: TenantResolver;
  /**
   * Asked when `resolveTenant` refuses a key on an /api path: the tenant that key opens on this path all
   * the same, or null. V0's nested-runtime mode passes it (a running conversation's own key opens that
   * conversation's routes, v0/face.ts); absent, nothing else opens a path.
   */
  pathKeyTenant?: (path: string, presentedKey: string | undefined) => TenantId | null;
  /** Null when rate limiting is off. */
  rateLimiter: RateLimiter | null;
  /** Bodies above this are answered 413 and never parsed. */
  maxBodyBytes: number;
  logger: pino.Logger;
  /**
   * The V1 app server's way: a request no route takes whole (unknown path, or known path with another
   * method) goes to the web UI's mount (`unmatched`: 200 text/html for a GET, 405 otherwise), and the
   * key is checked per route, after routing, as a dependency of the V1 routers is. Absent: the V0
   * way, 404 `{"detail":"Not Found"}` / 405, and the key checked on every /api path first.
   */
  unmatched?: (method: string) => ApiResponse;
}

/**
 * The bundled service's request body limit (its 413): replay_json can be large, but nothing legitimate
 * comes near this. Not the gateway's own GraphQL body limit (src/gateway/protection/limits.ts).
 * @default 5 MiB
 */
export const SERVICE_MAX_BODY_BYTES = 5 * 1024 * 1024;

/** Past this many discarded bytes of an oversize body the connection is cut instead of drained. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

type BodyResult = { kind: 'ok'; raw: Buffer } | { kind: 'too_large' };

/**
 * Reads the body up to `max` bytes. An oversize body is drained (not buffered) so the 413 reaches a
 * client that is still sending, then answered; a client that keeps going past the drain limit is cut.
 */
function readBody(req: http.IncomingMessage, max: number): Promise<BodyResult> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    let size = 0;
    let tooLarge = Number.isFinite(declared) && declared > max;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) tooLarge = true;
      if (tooLarge) {
        chunks.length = 0;
        if (size > DRAIN_LIMIT_BYTES) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () =>
      resolve(tooLarge ? { kind: 'too_large' } : { kind: 'ok', raw: Buffer.concat(chunks) }),
    );
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('request aborted'));
    });
  });
}

async function sendStream(
  res: http.ServerResponse,
  response: ApiResponse & { stream: AsyncIterable<string> },
) {
  res.writeHead(response.status, { 'content-type': 'application/json', ...response.headers });
  for await (const chunk of response.stream) {
    if (res.destroyed) return;
    res.write(chunk);
  }
  res.end();
}

function send(res: http.ServerResponse, response: ApiResponse): void {
  if (res.headersSent || res.destroyed) return;
  const payload = response.bytes?.content ?? response.text?.content ?? JSON.stringify(response.body);
  res.writeHead(response.status, {
    'content-type': response.bytes?.contentType ?? response.text?.contentType ?? 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...response.headers,
  });
  res.end(payload);
}

/** A malformed %-escape is kept as typed rather than failing the request; such an id matches nothing. */
function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

type Match =
  | { kind: 'route'; route: Route; params: string[] }
  | { kind: 'not_found' }
  | { kind: 'wrong_method'; allow: string[] };

function match(routes: Route[], method: string, path: string): Match {
  const allow: string[] = [];
  for (const route of routes) {
    const found = route.pattern.exec(path);
    if (!found) continue;
    if (route.method === method) {
      return { kind: 'route', route, params: found.slice(1).map(safeDecode) };
    }
    allow.push(route.method);
  }
  return allow.length > 0 ? { kind: 'wrong_method', allow } : { kind: 'not_found' };
}

/** Creates the server (not listening). Socket.IO attaches to the same server and takes `/socket.io/`. */
export function createHttpServer(deps: HttpServerDeps): http.Server {
  const { routes, resolveTenant, rateLimiter, maxBodyBytes, logger } = deps;

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    let path: string;
    let query: URLSearchParams;
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      path = url.pathname;
      query = url.searchParams;
    } catch {
      return send(res, { status: 404, body: { detail: 'Not Found' } });
    }

    if (rateLimiter) {
      const decision = rateLimiter.check(req.socket.remoteAddress ?? 'unknown');
      if (decision.action === 'reject') {
        return send(res, {
          status: 429,
          body: { message: 'Too many requests' },
          headers: { 'retry-after': String(decision.retryAfterSeconds) },
        });
      }
      if (decision.action === 'delay') await rateLimiter.wait(decision.ms);
    }

    const found = match(routes, method, path);
    if (deps.unmatched && found.kind !== 'route') return send(res, deps.unmatched(method));

    // Like the real server's middleware, the key check covers every /api path before routing, so an
    // unauthenticated caller learns nothing about which routes exist.
    let tenant: TenantId | null = null;
    let viaBearer = false;
    if (path === '/api' || path.startsWith('/api/')) {
      const presented = extractPresentedKey(req.headers);
      viaBearer = presented.viaBearer;
      tenant = resolveTenant(presented.key);
      if (tenant === null) tenant = deps.pathKeyTenant?.(path, presented.key) ?? null;
      if (tenant === null) return send(res, { status: 401, body: { detail: 'Unauthorized' } });
    }

    if (found.kind === 'not_found') return send(res, { status: 404, body: { detail: 'Not Found' } });
    if (found.kind === 'wrong_method') {
      return send(res, {
        status: 405,
        body: { detail: 'Method Not Allowed' },
        headers: { allow: found.allow.join(', ') },
      });
    }

    let body: unknown;
    let bodyProblem: ApiResponse | undefined;
    let rawBody: Buffer | undefined;
    if (found.route.body === 'raw') {
      const read = await readBody(req, maxBodyBytes);
      if (read.kind === 'too_large') {
        return send(res, { status: 413, body: { detail: 'Request body too large' } });
      }
      rawBody = read.raw;
    } else if (found.route.body !== 'ignored') {
      const read = await readBody(req, maxBodyBytes);
      if (read.kind === 'too_large') {
        return send(res, { status: 413, body: { detail: 'Request body too large' } });
      }
      if (read.raw.length === 0) {
        bodyProblem = { status: 422, body: { detail: [missingBodyIssue()] } };
      } else {
        try {
          body = JSON.parse(read.raw.toString('utf8'));
        } catch (error) {
          bodyProblem = { status: 422, body: { detail: [jsonInvalidIssue(error, read.raw.length)] } };
        }
      }
      if (bodyProblem && found.route.body === 'required') return send(res, bodyProblem);
    }

    const response = await found.route.handle({
      tenant: tenant ?? '',
      viaBearer,
      query,
      body,
      params: found.params,
      ...(bodyProblem ? { bodyProblem } : {}),
      ...(rawBody ? { rawBody, contentType: req.headers['content-type'] } : {}),
    });
    if (response.stream) return sendStream(res, { ...response, stream: response.stream });
    send(res, response);
  }

  return http.createServer((req, res) => {
    const started = performance.now();
    handle(req, res)
      .catch((error: unknown) => {
        // Aborted uploads are the client's doing; anything else is our bug, answered without details.
        const aborted = error instanceof Error && error.message === 'request aborted';
        if (!aborted) logger.error({ err: error, method: req.method }, 'request failed');
        send(res, { status: 500, body: { detail: 'Internal Server Error' } });
      })
      .finally(() => {
        // Method, path and status only: never headers (keys), query values or bodies.
        logger.debug(
          {
            method: req.method,
            path: req.url?.split('?')[0],
            status: res.statusCode,
            ms: Math.round(performance.now() - started),
          },
          'request',
        );
      });
  });
}
