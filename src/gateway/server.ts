/**
 * Puts a built gateway on a port: node:http for HTTP (GraphQL, GraphiQL, SSE, /health, /ready) and
 * graphql-ws on the same `/graphql` path, both through the same Yoga (envelop) pipeline so plugins,
 * context and logging are identical. Never builds the schema.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AsyncDisposableStack } from '@whatwg-node/disposablestack';
import { type ExecutionArgs, GraphQLError } from 'graphql';
import { WebSocketServer } from 'ws';
import { refusalBody, refusalStatus, tooManySubscriptions, unreadableDocument } from '../errors.ts';
import { credentialsFromConnectionParams } from './http/credentials.ts';
import { createHttpFastPath } from './http/http-fast-path.ts';
import { createTransportGuard, type TransportLimits } from './http/transport-guard.ts';
import { createMcpRoute, type McpLimits } from './mcp/mcp-route.ts';
import { DEFAULT_MAX_BODY_BYTES } from './protection/limits.ts';
import { variableErrors } from './protection/variable-errors.ts';
import { DEFAULT_SHUTDOWN_GRACE_MS } from './shutdown.ts';
import { openOperations, serveGraphqlWs } from './websocket/graphql-ws-binding.ts';
import { markSocketOperation } from './websocket/live-fan-out.ts';
import { createGateway, type Gateway, type GatewayOptions } from './yoga.ts';

/** Options of {@link startGateway}. */
export interface StartGatewayOptions extends GatewayOptions {
  /** 0 picks a free port. @default 4000 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** graphql-ws limits (live conversations); defaults are the WS_* constants below. */
  wsLimits?: {
    /** @default WS_MAX_PAYLOAD_BYTES */
    maxPayloadBytes?: number;
    /** @default WS_CONNECTION_INIT_TIMEOUT_MS */
    connectionInitTimeoutMs?: number;
    /** @default WS_MAX_SUBSCRIPTIONS_PER_SOCKET */
    maxSubscriptionsPerSocket?: number;
  };
  /**
   * How long `close()` waits for in-flight operations after it stopped accepting new ones; then the
   * rest is cut. `SHUTDOWN_GRACE_MS`. @default DEFAULT_SHUTDOWN_GRACE_MS (10 s)
   */
  shutdownGraceMs?: number;
  /** Host/Origin checks, request deadlines, SSE stall cut, per-credential stream cap (transport-guard.ts). */
  transportLimits?: TransportLimits;
  /**
   * The MCP endpoint (`/mcp`, docs/mcp.md): `MCP_ENDPOINT`, `MCP_MAX_BODY_BYTES`, `MCP_MAX_CONCURRENT`,
   * `MCP_MAX_RESOURCE_SUBSCRIPTIONS`.
   * @default { enabled: true, maxBodyBytes: 1048576, maxConcurrent: 256, maxResourceSubscriptions: 20 }
   */
  mcp?: { enabled?: boolean } & Partial<McpLimits>;
}

/** A listening gateway. */
export interface RunningGateway {
  /** `http://HOST:PORT/graphql`. */
  url: string;
  port: number;
  gateway: Gateway;
  /**
   * Graceful stop: refuses new requests and operations (503 / GATEWAY_SHUTTING_DOWN), ends every
   * subscription with a last GATEWAY_SHUTTING_DOWN result, waits up to `shutdownGraceMs` for
   * in-flight operations, then closes WebSocket clients (1001), remaining connections and the
   * upstream pool. Idempotent.
   */
  close(): Promise<void>;
}

// --- graphql-ws hardening (live conversations, issue 4) ---------------------------------------------
/**
 * Largest WebSocket message accepted. The ws default (100 MiB) lets one client make the gateway buffer
 * a huge frame; a GraphQL operation plus a long sendMessage content fits easily in this.
 */
const WS_MAX_PAYLOAD_BYTES = 256 * 1024;
/** A socket that has not sent `connection_init` by then is closed (4408), so idle sockets cannot pile up. */
const WS_CONNECTION_INIT_TIMEOUT_MS = 5_000;
/** Operations one socket may run at once; more are refused with TOO_MANY_SUBSCRIPTIONS. */
const WS_MAX_SUBSCRIPTIONS_PER_SOCKET = 50;

/** Yoga's envelop wraps execute/subscribe; graphql-ws calls them through the rootValue we hand it. */
interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/** Builds the gateway and listens. */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const gateway = createGateway(options);
  // Each part registers its teardown where it is built; after the drain, close() undoes them in
  // reverse order (graphql-ws, the WebSocket server, the HTTP server, the transport guard, the gateway).
  const teardown = new AsyncDisposableStack();
  teardown.defer(() => gateway.close());
  const { yoga } = gateway;
  const { shutdown } = gateway.hardening;
  const persisted = gateway.hardening.persistedOperations;
  const apq = gateway.hardening.automaticPersistedQueries;
  let activeRequests = 0;
  const guard = createTransportGuard({
    ...options.transportLimits,
    corsOrigins: options.hardening?.corsOrigins ?? [],
    defaultSessionApiKey: options.defaultSessionApiKey,
    listenHost: options.host ?? '127.0.0.1',
    endpoint: yoga.graphqlEndpoint,
    logger: gateway.logger,
  });
  teardown.defer(() => guard.close());
  const mcp =
    options.mcp?.enabled === false
      ? null
      : createMcpRoute({
          schema: yoga.getEnveloped().schema,
          graphql: (request) => Promise.resolve(yoga.fetch(request)),
          graphqlEndpoint: yoga.graphqlEndpoint,
          policy: guard.policy,
          persisted,
          limits: {
            maxBodyBytes: options.mcp?.maxBodyBytes ?? 1048576,
            maxConcurrent: options.mcp?.maxConcurrent ?? 256,
            maxResourceSubscriptions: options.mcp?.maxResourceSubscriptions ?? 20,
          },
          logger: gateway.logger,
          version: '0.1.0',
        });
  if (mcp) teardown.defer(() => mcp.close());
  // The common JSON POST of a query or mutation skips Yoga's fetch-API pipeline (http-fast-path.ts).
  const fastPath = createHttpFastPath(yoga, {
    maxBodyBytes: options.hardening?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    persistedOperations: persisted !== null,
    preparedOperations: gateway.preparedOperations,
    logger: gateway.logger,
  });
  const server: Server = createServer(guard.serverOptions, (req: IncomingMessage, res: ServerResponse) => {
    if (shutdown.draining) {
      // Connections kept alive may still send requests after close() began: refuse and hang up.
      res.writeHead(refusalStatus('GATEWAY_SHUTTING_DOWN'), {
        'content-type': 'application/json',
        connection: 'close',
        'retry-after': '1',
      });
      res.end(refusalBody('GATEWAY_SHUTTING_DOWN'));
      return;
    }
    if (guard.refuseRequest(req, res)) return;
    activeRequests++;
    res.once('close', () => activeRequests--);
    if (gateway.archiveRoute.tryAnswer(req, res)) return;
    if (mcp?.tryAnswer(req, res)) return;
    if (!fastPath.tryAnswer(req, res)) void yoga(req, res);
  });
  guard.install(server);
  let serverClosed: Promise<void> | undefined;
  /** Stops accepting connections (once); resolves when the last one has ended. */
  const stopAccepting = () =>
    (serverClosed ??= new Promise<void>((resolve) => server.close(() => resolve())));
  teardown.defer(async () => {
    const closed = stopAccepting();
    server.closeAllConnections();
    await closed;
  });
  const wsServer = new WebSocketServer({
    server,
    path: yoga.graphqlEndpoint,
    verifyClient: guard.verifyUpgrade,
    maxPayload: options.wsLimits?.maxPayloadBytes ?? WS_MAX_PAYLOAD_BYTES,
    // The graphql-ws binding keeps its own list of sockets; ws's costs a listener closure per socket.
    clientTracking: false,
  });
  teardown.defer(() => new Promise<void>((resolve) => wsServer.close(() => resolve())));
  const maxOperations = options.wsLimits?.maxSubscriptionsPerSocket ?? WS_MAX_SUBSCRIPTIONS_PER_SOCKET;

  const wsDisposable = serveGraphqlWs(
    {
      // Glue between graphql-ws and envelop: the enveloped execute/subscribe travel in rootValue.
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
      connectionInitWaitTimeout: options.wsLimits?.connectionInitTimeoutMs ?? WS_CONNECTION_INIT_TIMEOUT_MS,
      onConnect: (ctx) => {
        // Refuse malformed credentials before any operation; a wrong key is the upstream's call.
        let presented: ReturnType<typeof credentialsFromConnectionParams>;
        try {
          presented = credentialsFromConnectionParams(ctx.connectionParams);
        } catch {
          return false;
        }
        return guard.admitSocket(ctx.extra.socket, presented);
      },
      onSubscribe: async (ctx, _id, payload) => {
        // graphql-ws registers the operation before calling us, so the count includes this one.
        if (openOperations(ctx) > maxOperations) {
          return [tooManySubscriptions(maxOperations)];
        }
        // Only what the context needs: graphql-ws's whole ctx (its subscriptions map, the socket) would
        // be copied into, and kept alive by, each of possibly thousands of operation contexts.
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          connectionParams: ctx.connectionParams ?? {},
          params: payload,
        });
        let document: ExecutionArgs['document'];
        let registration: { hash: string; document: string } | null = null;
        try {
          // The allow-list (or else APQ) applies here too; Yoga's plugins for them only see HTTP.
          let query = payload.query;
          if (persisted) query = persisted.resolve(payload);
          else if (apq) ({ query = '', registration } = await apq.resolve(payload));
          document = parse(query);
        } catch (error) {
          // A syntax error or a refused document answers this operation; the socket stays up.
          return [error instanceof GraphQLError ? error : unreadableDocument()];
        }
        const contextValue = await contextFactory();
        // A live subscription over a socket may join a live group (live-fan-out.ts); SSE ones may not.
        markSocketOperation(contextValue);
        const args: ExecutionArgs = {
          schema,
          operationName: payload.operationName ?? null,
          document,
          variableValues: payload.variables ?? null,
          contextValue,
          rootValue: { execute, subscribe } satisfies EnvelopedRoot,
        };
        const errors = validate(args.schema, args.document);
        if (errors.length) return errors;
        if (registration) await apq?.register(registration, document).catch(() => {});
        // Variables that do not coerce answer this operation with an `error` message, like validation.
        const variableProblems = variableErrors(args, {
          hideSuggestions: !gateway.hardening.fieldSuggestions,
        });
        if (variableProblems.length) return variableProblems;
        return args;
      },
    },
    wsServer,
  );
  teardown.defer(() => wsDisposable.dispose());

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 4000, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await teardown.disposeAsync();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${yoga.graphqlEndpoint}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    gateway,
    close() {
      closing ??= (async () => {
        const startedAt = performance.now();
        shutdown.beginDrain();
        void stopAccepting();
        const drained = await shutdown.waitForIdle(
          options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS,
          () => activeRequests === 0,
          () => server.closeIdleConnections(),
        );
        gateway.logger.info(
          {
            drained,
            durationMs: Math.round(performance.now() - startedAt),
            cut: drained ? 0 : shutdown.executing + shutdown.streams + activeRequests,
          },
          drained ? 'drained' : 'grace period over; cutting what is left',
        );
        await teardown.disposeAsync();
      })();
      return closing;
    },
  };
}
