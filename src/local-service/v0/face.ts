/**
 * The V0 face of the local service (OpenHands 0.53): the REST route table (routes.ts) on the service's
 * port and, once that port's HTTP server exists, the Socket.IO conversation socket beside it
 * (socket.ts), both over V0's store (store.ts), the agent runtime (agent.ts) and the conversations'
 * workspace folders (../workspace/workspaces.ts; their routes: workspace-routes.ts).
 */
import type { Server as HttpServer } from 'node:http';
import type pino from 'pino';
import type { TenantId, TenantResolver } from '../auth.ts';
import type { LocalDatabase } from '../database.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { createAgentRuntime } from './agent.ts';
import { CONVERSATION_SUBTREE, createRoutes } from './routes.ts';
import type { AgentTimings } from './seams.ts';
import { attachConversationSocket, type ConversationSocket } from './socket.ts';
import { openV0Store } from './store.ts';

/** Timings and modes of the V0 face. */
export interface V0Options {
  timings: AgentTimings;
  /** Each running conversation gets an absolute url and its own key, like the real nested runtimes. */
  nestedRuntime: boolean;
  /** Agent loops running at once; one more stops the oldest. @default 50 (agent.ts) */
  maxRunningAgents?: number;
  /** The service's own origin, known once it listens (nested-runtime urls). */
  serviceUrl: () => string;
  /** Who a socket's key belongs to (the REST side asks the HTTP server's resolver). */
  resolveTenant: TenantResolver;
  /** The conversations' workspace folders. */
  workspaces: Workspaces;
}

/** Builds the V0 face over the open database: its routes, its socket once there is a server, and teardown. */
export function createV0Face(database: LocalDatabase, options: V0Options, logger: pino.Logger) {
  const store = openV0Store(database);
  // No agent survives a restart: whatever was running when the last process died is stopped now.
  store.markAllStopped();
  const runtime = createAgentRuntime({
    store,
    workspaces: options.workspaces,
    timings: options.timings,
    nestedRuntime: options.nestedRuntime,
    logger,
    ...(options.maxRunningAgents === undefined ? {} : { maxRunningAgents: options.maxRunningAgents }),
  });
  let socket: ConversationSocket | null = null;
  return {
    routes: createRoutes({
      store,
      tokens: database,
      runtime,
      workspaces: options.workspaces,
      nestedRuntime: options.nestedRuntime,
      serviceUrl: options.serviceUrl,
    }),
    /** Nested-runtime mode: a running conversation's own key opens that conversation's routes. */
    pathKeyTenant(path: string, presentedKey: string | undefined): TenantId | null {
      const conversationId = CONVERSATION_SUBTREE.exec(path)?.[1];
      return conversationId === undefined ? null : runtime.tenantForSessionKey(conversationId, presentedKey);
    },
    /** Attaches the conversation socket to the service's HTTP server (it takes `/socket.io/`). */
    attach(server: HttpServer): void {
      socket ??= attachConversationSocket(server, {
        store,
        runtime,
        resolveTenant: options.resolveTenant,
        logger,
      });
    },
    /** Disconnects every socket, then stops every agent loop (conversations become STOPPED). */
    async close(): Promise<void> {
      await socket?.close();
      await runtime.close();
    },
  };
}
