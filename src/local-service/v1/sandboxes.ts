/**
 * The sandboxes of the V1 face and their agent servers: each RUNNING sandbox has one listener on its
 * own loopback port. Like the Docker sandbox service: ids `oh-agent-server-<base62 of 16 random
 * bytes>`, keys base62 of 32 random bytes, at most `maxRunning` running per owner (starting or
 * resuming one more pauses the oldest), pause really stops the listener and resume listens again on
 * the same port.
 */
import { randomBytes } from 'node:crypto';
import type pino from 'pino';
import type { Workspaces } from '../workspace/workspaces.ts';
import type { V1Agent } from './agent.ts';
import { type AgentServer, createAgentServer } from './agent-server.ts';
import { utcTimestamp } from './event-factory.ts';
import type { V1Sandbox } from './records.ts';
import type { V1Store } from './store.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 of `n` random bytes (the big-endian number in base 62). */
function randomBase62(n: number): string {
  let value = BigInt(`0x${randomBytes(n).toString('hex')}`);
  let out = '';
  while (value > 0n) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out || '0';
}

/** The image the Docker sandbox service names as its spec at app main. */
const SANDBOX_SPEC_ID = 'ghcr.io/openhands/agent-server:5f62cee-python';

/** What the sandbox manager needs. */
export interface SandboxDeps {
  store: V1Store;
  agent: V1Agent;
  /** The sandboxes' workspace folders: made with a sandbox, deleted with it. */
  workspaces: Workspaces;
  logger: pino.Logger;
  /** Running sandboxes per owner; one more pauses the oldest. @default 5 (the Docker default) */
  maxRunning?: number;
  /** The event socket's wait for an auth frame. @default 10000 */
  authTimeoutMs?: number;
}

/** Creates the manager; `close()` stops every listener (the sandboxes stay RUNNING on disk until recovery). */
export function createSandboxes(deps: SandboxDeps) {
  const { store, agent } = deps;
  const maxRunning = Math.max(1, deps.maxRunning ?? 5);
  const servers = new Map<string, AgentServer>();
  // Once closing, no listener may start: a start task still in flight must not leave one behind.
  let closed = false;

  function serverOf(sandbox: V1Sandbox): AgentServer {
    let server = servers.get(sandbox.id);
    if (!server) {
      server = createAgentServer(sandbox, {
        store,
        agent,
        workspaces: deps.workspaces,
        logger: deps.logger,
        ...(deps.authTimeoutMs === undefined ? {} : { authTimeoutMs: deps.authTimeoutMs }),
      });
      servers.set(sandbox.id, server);
    }
    return server;
  }

  /** Stops the agent loops of the sandbox's conversations (their sockets drop with the listener). */
  function haltConversations(sandbox: V1Sandbox): void {
    for (const c of store.conversationsInSandbox(sandbox.id)) agent.halt(c.tenant, c.id);
  }

  async function stop(sandbox: V1Sandbox): Promise<void> {
    haltConversations(sandbox);
    await servers.get(sandbox.id)?.stop();
  }

  /** Pauses the owner's oldest running sandboxes until one more fits. */
  async function makeRoom(tenant: string, except: string): Promise<void> {
    const running = store.runningSandboxes(tenant).filter((s) => s.id !== except);
    for (const old of running.slice(0, Math.max(0, running.length - maxRunning + 1))) {
      deps.logger.info({ sandbox: old.id }, 'pausing the oldest sandbox (limit reached)');
      await stop(old);
      store.setSandbox(tenant, old.id, 'PAUSED', old.port);
    }
  }

  async function listen(sandbox: V1Sandbox): Promise<V1Sandbox> {
    if (closed) throw new Error('the service is closing');
    await makeRoom(sandbox.tenant, sandbox.id);
    let port: number;
    try {
      port = await serverOf(sandbox).start(sandbox.port ?? 0);
    } catch (error) {
      // The old port was taken meanwhile by someone else: a new one, as a restarted container gets.
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      port = await serverOf(sandbox).start(0);
    }
    if (closed) {
      // close() ran while this listener was starting: it must not outlive the service.
      await serverOf(sandbox).stop();
      throw new Error('the service is closing');
    }
    store.setSandbox(sandbox.tenant, sandbox.id, 'RUNNING', port);
    return { ...sandbox, status: 'RUNNING', port };
  }

  return {
    /** A new sandbox, listening. */
    async create(tenant: string): Promise<V1Sandbox> {
      if (closed) throw new Error('the service is closing');
      const sandbox: V1Sandbox = {
        id: `oh-agent-server-${randomBase62(16)}`,
        tenant,
        status: 'STARTING',
        sessionApiKey: randomBase62(32),
        port: null,
        specId: SANDBOX_SPEC_ID,
        createdAt: utcTimestamp(),
      };
      store.insertSandbox(sandbox);
      deps.workspaces.ensure(sandbox.id);
      return listen(sandbox);
    },
    /** Pause: the listener closes. False for an unknown sandbox; pausing a paused one is fine. */
    async pause(tenant: string, id: string): Promise<boolean> {
      const sandbox = store.getSandbox(tenant, id);
      if (!sandbox) return false;
      await stop(sandbox);
      if (sandbox.status === 'RUNNING' || sandbox.status === 'STARTING')
        store.setSandbox(tenant, id, 'PAUSED', sandbox.port);
      return true;
    },
    /** Resume: listening again, on its port. False for an unknown sandbox. */
    async resume(tenant: string, id: string): Promise<V1Sandbox | undefined> {
      const sandbox = store.getSandbox(tenant, id);
      if (!sandbox) return undefined;
      return listen(sandbox);
    },
    /** Delete: the listener closes and the sandbox is gone (its conversations' sandbox is MISSING). */
    async remove(tenant: string, id: string): Promise<boolean> {
      const sandbox = store.getSandbox(tenant, id);
      if (!sandbox) return false;
      await stop(sandbox);
      servers.delete(id);
      await deps.workspaces.remove(id);
      return store.deleteSandbox(tenant, id);
    },
    /** The agent server's origin while it runs. */
    url(sandbox: V1Sandbox): string | null {
      return sandbox.status === 'RUNNING' && sandbox.port !== null
        ? `http://127.0.0.1:${sandbox.port}`
        : null;
    },
    async close(): Promise<void> {
      closed = true;
      await Promise.all([...servers.values()].map((s) => s.stop()));
      servers.clear();
    },
  };
}

/** The sandbox manager of one V1 face. */
export type Sandboxes = ReturnType<typeof createSandboxes>;
