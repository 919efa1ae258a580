/**
 * One sandbox's agent server: a real HTTP listener on its own loopback port with the sandbox's key,
 * serving the REST routes (agent-routes.ts; the workspace's: file-routes.ts, git-routes.ts,
 * bash-route.ts) and the event socket (event-socket.ts). `stop()` closes
 * the listener for real (sockets drop, new connections are refused), `start(port)` listens again, on
 * the same port when the sandbox resumes.
 */
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type pino from 'pino';
import { ALIVE_BODY } from '../../contract/common.ts';
import type { Route } from '../api-route.ts';
import { createHttpServer, SERVICE_MAX_BODY_BYTES } from '../http-server.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import type { V1Agent } from './agent.ts';
import { createAgentRoutes } from './agent-routes.ts';
import { createBashRoute } from './bash-route.ts';
import { createEventSocket } from './event-socket.ts';
import { createFileRoutes } from './file-routes.ts';
import { createGitRoutes } from './git-routes.ts';
import type { V1Sandbox } from './records.ts';
import type { V1Store } from './store.ts';

/** What an agent server needs. */
export interface AgentServerDeps {
  store: V1Store;
  agent: V1Agent;
  /** The sandboxes' workspace folders (the file and git routes). */
  workspaces: Workspaces;
  logger: pino.Logger;
  /** The socket's wait for an auth frame. @default 10000 */
  authTimeoutMs?: number;
}

/** The versions `/server_info` reports: the imitated agent server's. */
const SERVER_INFO = { version: '1.43.1', sdk_version: '1.43.1', local_imitation: true };

function keysEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Builds (does not start) the agent server of `sandbox`. */
export function createAgentServer(sandbox: V1Sandbox, deps: AgentServerDeps) {
  const keyMatches = (presented: string) => keysEqual(presented, sandbox.sessionApiKey);
  const started = Date.now();
  const health: Route[] = [
    {
      method: 'GET',
      pattern: /^\/alive$/,
      body: 'ignored',
      handle: () => ({ status: 200, body: ALIVE_BODY }),
    },
    {
      method: 'GET',
      pattern: /^\/health$/,
      body: 'ignored',
      handle: () => ({ status: 200, body: ALIVE_BODY }),
    },
    {
      method: 'GET',
      pattern: /^\/ready$/,
      body: 'ignored',
      handle: () => ({ status: 200, body: { status: 'ready' } }),
    },
    {
      method: 'GET',
      pattern: /^\/server_info$/,
      body: 'ignored',
      handle: () => ({
        status: 200,
        body: { ...SERVER_INFO, uptime: (Date.now() - started) / 1000 },
      }),
    },
  ];
  const logger = deps.logger.child({ sandbox: sandbox.id });
  const server = createHttpServer({
    routes: [
      ...health,
      ...createAgentRoutes({ sandboxId: sandbox.id, store: deps.store, agent: deps.agent }),
      ...createFileRoutes({
        sandboxId: sandbox.id,
        sessionApiKey: sandbox.sessionApiKey,
        workspaces: deps.workspaces,
      }),
      ...createGitRoutes({ sandboxId: sandbox.id, workspaces: deps.workspaces }),
      createBashRoute({ sandboxId: sandbox.id, workspaces: deps.workspaces }),
    ],
    // The sandbox's one key opens its /api routes, as the owner's tenant; anything else is 401.
    resolveTenant: (presented) => (presented !== undefined && keyMatches(presented) ? sandbox.tenant : null),
    rateLimiter: null,
    maxBodyBytes: SERVICE_MAX_BODY_BYTES,
    logger,
  });
  const socket = createEventSocket({
    sandboxId: sandbox.id,
    tenant: sandbox.tenant,
    keyMatches,
    store: deps.store,
    agent: deps.agent,
    logger,
    ...(deps.authTimeoutMs === undefined ? {} : { authTimeoutMs: deps.authTimeoutMs }),
  });
  server.on('upgrade', (request, duplex, head) => socket.upgrade(request, duplex, head));
  let listening = false;

  return {
    /** Listens on 127.0.0.1:`port` (0: any free port); resolves with the port. */
    async start(port: number): Promise<number> {
      if (listening) return (server.address() as AddressInfo).port;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      listening = true;
      return (server.address() as AddressInfo).port;
    },
    /** Stops listening and cuts every connection and socket; resolves once the port is free. */
    async stop(): Promise<void> {
      if (!listening) return;
      listening = false;
      socket.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** A sandbox's agent server. */
export type AgentServer = ReturnType<typeof createAgentServer>;
