/**
 * A scripted upstream for the workspace routes: a node:http server on 127.0.0.1 port 0 whose answers
 * the test scripts per route, like hostile-upstream.ts but byte-exact both ways, which files and
 * archives need: request bodies are kept as bytes (multipart uploads), and a reply may be raw bytes, or
 * a body sent in chunks with a pause between them and the connection cut after some of them (an
 * archive that breaks off midway).
 *
 *   const up = await workspaceDoubleForTest(); // closed when the test finishes
 *   up.on('GET', '/api/file/download', { bytes: Buffer.from([0xff, 0xfe]) });
 *   up.on('GET', /\/zip-directory$/, { chunks: [a, b], intervalMs: 20, cutAfter: 1 });
 *
 * Unscripted routes answer 404 `{"detail":"Not Found"}`.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { onTestFinished } from 'vitest';
import { misbehavingUpstreamForTest } from './misbehaving-upstream.ts';

/** What the double received. */
export interface WorkspaceDoubleRequest {
  method: string;
  /** Without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body as JSON, when it is JSON. */
  json: unknown;
}

/** One scripted answer. */
export interface WorkspaceDoubleReply {
  /** @default 200 */
  status?: number;
  /** Added to (and replacing) the default `content-type` of the body kind. */
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
  bytes?: Uint8Array;
  /** Sent one after the other, `intervalMs` apart, without a content-length. */
  chunks?: Uint8Array[];
  intervalMs?: number;
  /** With `chunks`: the connection is destroyed after this many chunks were sent. */
  cutAfter?: number;
}

type Script = WorkspaceDoubleReply | ((request: WorkspaceDoubleRequest) => WorkspaceDoubleReply);

/** A running double. */
export interface WorkspaceDouble {
  url: string;
  requests: WorkspaceDoubleRequest[];
  /** Scripts a route (exact path or a RegExp on the path); later scripts win. */
  on(method: string, path: string | RegExp, script: Script): void;
  /** The requests on one path (exact or RegExp). */
  calls(path: string | RegExp): WorkspaceDoubleRequest[];
}

const matches = (pattern: string | RegExp, path: string) =>
  typeof pattern === 'string' ? pattern === path : pattern.test(path);

/** Starts the double on 127.0.0.1, port 0 (a misbehaving upstream: closed when the test finishes). */
export async function workspaceDoubleForTest(): Promise<WorkspaceDouble> {
  const scripts: Array<{ method: string; path: string | RegExp; script: Script }> = [];
  const requests: WorkspaceDoubleRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  onTestFinished(() => {
    for (const timer of timers) clearTimeout(timer);
  });
  const upstream = await misbehavingUpstreamForTest((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://double');
      const body = Buffer.concat(chunks);
      const request: WorkspaceDoubleRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        json: parseJson(body),
      };
      requests.push(request);
      const found = scripts.findLast(
        (candidate) => candidate.method === request.method && matches(candidate.path, request.path),
      );
      const reply = found
        ? typeof found.script === 'function'
          ? found.script(request)
          : found.script
        : { status: 404, json: { detail: 'Not Found' } };
      answer(res, reply, timers);
    });
  });
  return {
    url: upstream.url,
    requests,
    on: (method, path, script) => scripts.push({ method, path, script }),
    calls: (path) => requests.filter((request) => matches(path, request.path)),
  };
}

function parseJson(body: Buffer): unknown {
  try {
    return body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
}

/** Sends one reply: a whole body with its length, or chunks apart in time, maybe cut. */
function answer(res: ServerResponse, reply: WorkspaceDoubleReply, timers: Set<NodeJS.Timeout>): void {
  const status = reply.status ?? 200;
  if (!reply.chunks) {
    const [body, type] =
      reply.bytes !== undefined
        ? [Buffer.from(reply.bytes), 'application/octet-stream']
        : reply.text !== undefined
          ? [Buffer.from(reply.text), 'text/plain; charset=utf-8']
          : [Buffer.from(reply.json === undefined ? '' : JSON.stringify(reply.json)), 'application/json'];
    res.writeHead(status, { 'content-type': type, 'content-length': String(body.length), ...reply.headers });
    res.end(body);
    return;
  }
  res.writeHead(status, { 'content-type': 'application/octet-stream', ...reply.headers });
  res.flushHeaders();
  const queue = [...reply.chunks];
  let sent = 0;
  const step = () => {
    if (res.destroyed) return;
    if (reply.cutAfter !== undefined && sent >= reply.cutAfter) {
      res.socket?.destroy();
      return;
    }
    const next = queue.shift();
    if (next === undefined) {
      res.end();
      return;
    }
    sent++;
    res.write(next);
    const timer = setTimeout(() => {
      timers.delete(timer);
      step();
    }, reply.intervalMs ?? 0);
    timers.add(timer);
  };
  step();
}

/** The parts of a multipart body: each part's name, file name and bytes. */
export function multipartParts(
  request: WorkspaceDoubleRequest,
): Array<{ name: string; fileName: string; bytes: Buffer }> {
  const boundary = /boundary=(.+)$/.exec(String(request.headers['content-type'] ?? ''))?.[1];
  if (!boundary) return [];
  const parts: Array<{ name: string; fileName: string; bytes: Buffer }> = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let at = request.body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (request.body.subarray(start, start + 2).toString() === '--') break;
    const next = request.body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = request.body.subarray(start + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    parts.push({
      name: /name="([^"]*)"/.exec(head)?.[1] ?? '',
      fileName: /filename="([^"]*)"/.exec(head)?.[1] ?? '',
      bytes: Buffer.from(part.subarray(split + 4)),
    });
    at = next;
  }
  return parts;
}
