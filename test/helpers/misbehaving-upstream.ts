/**
 * A tiny node:http server on 127.0.0.1 port 0 that misbehaves on purpose (hangs, 429s, 5xx, odd
 * values). Only for what the real local service cannot be made to do; everything else uses it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { onTestFinished } from 'vitest';
import { closeOnce, listenOnLoopback, stopServer } from './loopback.ts';

/** A running misbehaving upstream. */
export interface MisbehavingUpstream {
  url: string;
  /** Requests seen so far (method and path). */
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers'] }>;
  /** Resolves when a request's connection was closed by the client before an answer. */
  abortedRequests: number;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the server with a handler; the handler may simply never answer. */
export async function startMisbehavingUpstream(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<MisbehavingUpstream> {
  const state: MisbehavingUpstream = {
    url: '',
    requests: [],
    abortedRequests: 0,
    close: async () => {},
    [Symbol.asyncDispose]: async () => {},
  };
  const server = createServer((req, res) => {
    state.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    res.on('close', () => {
      if (!res.writableEnded) state.abortedRequests++;
    });
    handler(req, res);
  });
  state.url = await listenOnLoopback(server);
  state.close = closeOnce(() => stopServer(server));
  state[Symbol.asyncDispose] = state.close;
  return state;
}

/** Answers JSON. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** {@link startMisbehavingUpstream}, closed when the current test finishes. */
export async function misbehavingUpstreamForTest(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<MisbehavingUpstream> {
  const upstream = await startMisbehavingUpstream(handler);
  onTestFinished(() => upstream.close());
  return upstream;
}
