/**
 * The bundled local conversation service, in-process: store + agent runtime + REST + Socket.IO on
 * one port (the V0 face), or the V1 face (`api: 'v1'`): the app server's routes on that port and one
 * agent server per running sandbox on loopback ports of their own, over the same store and tenants.
 * The gateway's `npm start` embeds it by default; tests start it on port 0.
 */
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createTenantResolver } from './auth.ts';
import { createHttpServer, DEFAULT_MAX_BODY_BYTES } from './http-server.ts';
import { createRateLimiter } from './rate-limit.ts';
import { openConversationStore } from './store.ts';
import { createAgentRuntime, DEFAULT_AGENT_TIMINGS } from './v0/agent.ts';
import { createRoutes } from './v0/routes.ts';
import type { AgentTimings } from './v0/seams.ts';
import { attachConversationSocket } from './v0/socket.ts';
import { createV1Face, type V1Options } from './v1/app-server.ts';

/** Options of {@link startLocalService}. */
export interface LocalServiceOptions {
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Directory of the SQLite store; created when missing. */
  dataDir: string;
  /** Accepted session API keys, one tenant each. Empty or absent: no auth (the real server's open mode). @default [] */
  sessionApiKeys?: string[];
  /** Give each running conversation an absolute url and its own key, like the real nested runtimes. @default false */
  nestedRuntime?: boolean;
  /** Reproduce the real server's per-IP rate limit (delay above 10/s, 429 above 20/s). @default false */
  rateLimit?: boolean;
  /** Delays of the deterministic agent. @default DEFAULT_AGENT_TIMINGS (200 / 300 / 50 ms) */
  agentTimings?: Partial<AgentTimings>;
  /** Agent loops running at once; starting one more stops the oldest. @default 50 (v0/agent.ts) */
  maxRunningAgents?: number;
  /** Request bodies above this are answered 413. @default 5 MiB */
  maxBodyBytes?: number;
  /** @default pino at level info */
  logger?: pino.Logger;
  /** Which OpenHands API the service speaks: 0.53's (`v0`) or the app server + agent servers (`v1`). @default 'v0' */
  api?: 'v0' | 'v1';
  /** V1 only: start-task step delay (@default 150 ms), sandbox cap, socket auth wait. */
  v1?: Partial<Omit<V1Options, 'replyMs'>>;
}

/** A running local service. */
export interface LocalService {
  /** `http://HOST:PORT` without a trailing slash (V1: the app server's). */
  url: string;
  port: number;
  api: 'v0' | 'v1';
  /** Closes socket, runtime, HTTP server (cutting keep-alive connections) and store, in that order. Idempotent. */
  close(): Promise<void>;
}

/** Starts the local service and resolves once it listens. */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? pino({ name: 'local-service' });
  const nestedRuntime = options.nestedRuntime ?? false;
  const store = openConversationStore(options.dataDir);
  // No agent survives a restart: whatever was running when the last process died is stopped now.
  store.markAllStopped();
  const runtime = createAgentRuntime({
    store,
    timings: { ...DEFAULT_AGENT_TIMINGS, ...options.agentTimings },
    // Unused by the V1 face, which runs its own agent (v1/agent.ts) over the same script.
    nestedRuntime,
    logger,
    ...(options.maxRunningAgents !== undefined ? { maxRunningAgents: options.maxRunningAgents } : {}),
  });
  const resolveTenant = createTenantResolver(options.sessionApiKeys ?? []);
  const rateLimiter = options.rateLimit ? createRateLimiter() : null;
  const api = options.api ?? 'v0';
  const timings = { ...DEFAULT_AGENT_TIMINGS, ...options.agentTimings };
  const v1 =
    api === 'v1'
      ? createV1Face(store, { startStepMs: 150, ...options.v1, replyMs: timings.replyMs }, logger)
      : null;
  let url = '';
  const server = createHttpServer({
    routes: v1 ? v1.routes : createRoutes({ store, runtime, nestedRuntime, serviceUrl: () => url }),
    resolveTenant,
    runtime,
    rateLimiter,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    logger,
    ...(v1 ? { unmatched: v1.unmatched } : {}),
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await v1?.close();
    await runtime.close();
    store.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // The V1 face has no Socket.IO: its live events are on the agent servers' WebSockets.
  const socket = v1 ? null : attachConversationSocket(server, { store, runtime, resolveTenant, logger });

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    api,
    close() {
      closing ??= (async () => {
        await socket?.close();
        await v1?.close();
        await runtime.close();
        rateLimiter?.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        store.close();
      })();
      return closing;
    },
  };
}
