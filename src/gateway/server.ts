/**
 * Puts a built gateway on a port: node:http for HTTP (GraphQL, GraphiQL, SSE, /health, /ready) and
 * graphql-ws on the same `/graphql` path, both through the same Yoga (envelop) pipeline so plugins,
 * context and logging are identical. Never builds the schema.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ExecutionArgs, GraphQLError } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { credentialsFromConnectionParams } from './context.ts';
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
}

/** A listening gateway. */
export interface RunningGateway {
  /** `http://HOST:PORT/graphql`. */
  url: string;
  port: number;
  gateway: Gateway;
  /** Closes WebSocket clients, the HTTP server (cutting keep-alive connections) and the upstream pool. Idempotent. */
  close(): Promise<void>;
}

// --- graphql-ws hardening (live conversations, issue 4) ---------------------------------------------
/**
 * Largest WebSocket message accepted. The ws default (100 MiB) lets one client make the gateway buffer
 * a huge frame; a GraphQL operation plus a long sendMessage content fits easily in this.
 */
export const WS_MAX_PAYLOAD_BYTES = 256 * 1024;
/** A socket that has not sent `connection_init` by then is closed (4408), so idle sockets cannot pile up. */
export const WS_CONNECTION_INIT_TIMEOUT_MS = 5_000;
/** Operations one socket may run at once; more are refused with TOO_MANY_SUBSCRIPTIONS. */
export const WS_MAX_SUBSCRIPTIONS_PER_SOCKET = 50;

/** Yoga's envelop wraps execute/subscribe; graphql-ws calls them through the rootValue we hand it. */
interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/** Builds the gateway and listens. */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const gateway = createGateway(options);
  const { yoga } = gateway;
  const server: Server = createServer(yoga);
  const wsServer = new WebSocketServer({
    server,
    path: yoga.graphqlEndpoint,
    maxPayload: options.wsLimits?.maxPayloadBytes ?? WS_MAX_PAYLOAD_BYTES,
  });
  const maxOperations = options.wsLimits?.maxSubscriptionsPerSocket ?? WS_MAX_SUBSCRIPTIONS_PER_SOCKET;

  const wsDisposable = useServer(
    {
      // Glue between graphql-ws and envelop: the enveloped execute/subscribe travel in rootValue.
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
      connectionInitWaitTimeout: options.wsLimits?.connectionInitTimeoutMs ?? WS_CONNECTION_INIT_TIMEOUT_MS,
      onConnect: (ctx) => {
        // Refuse malformed credentials before any operation; a wrong key is the upstream's call.
        try {
          credentialsFromConnectionParams(ctx.connectionParams);
          return true;
        } catch {
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) => {
        // graphql-ws registers the operation before calling us, so the count includes this one.
        if (Object.keys(ctx.subscriptions).length > maxOperations) {
          return [
            new GraphQLError(`At most ${maxOperations} operations may run at once on one connection.`, {
              extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' },
            }),
          ];
        }
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          connectionParams: ctx.connectionParams ?? {},
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params: payload,
        });
        const args: ExecutionArgs = {
          schema,
          operationName: payload.operationName ?? null,
          document: parse(payload.query),
          variableValues: payload.variables ?? null,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe } satisfies EnvelopedRoot,
        };
        const errors = validate(args.schema, args.document);
        if (errors.length) return errors;
        return args;
      },
    },
    wsServer,
  );

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 4000, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await wsDisposable.dispose();
    await gateway.close();
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
        await wsDisposable.dispose();
        await new Promise<void>((resolve) => wsServer.close(() => resolve()));
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await gateway.close();
      })();
      return closing;
    },
  };
}
