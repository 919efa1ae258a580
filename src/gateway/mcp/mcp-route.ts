/**
 * gateway/mcp/: the MCP endpoint (`/mcp`, Model Context Protocol over Streamable HTTP), built on the
 * official TypeScript SDK v2 (`@modelcontextprotocol/server`). Its `createMcpHandler` serves both eras
 * from one server factory: the stateless 2026-07-28 revision (a `_meta` envelope on every request, no
 * session) and, through its stateless legacy fallback, 2025-era clients (2025-11-25, 2025-06-18,
 * 2025-03-26: `initialize`, then one POST per message; GET and DELETE answer 405). No session is ever
 * created, so there is no session id to guess or to bind a credential to.
 *
 * Served on the node request before Yoga, like the archive route. Every request passes, before the SDK
 * sees it: the Host check and the Origin check (DNS rebinding, the transport guard's policy: a browser
 * page may drive `/mcp` only from the gateway's own origin or `CORS_ORIGINS`), then a body cap
 * (`MCP_MAX_BODY_BYTES`, 413 PAYLOAD_TOO_LARGE) and a cap on MCP requests in flight
 * (`MCP_MAX_CONCURRENT`, 429 RATE_LIMITED). The caller's credential is read from each request's own
 * headers (the ones GraphQL reads) and handed to the tool's GraphQL operation, which runs through
 * `yoga.fetch`: its limits, costs, rate limits, tenancy and error codes are GraphQL's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { createMcpHandler, ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { type GraphQLSchema, parse, validate } from 'graphql';
import type pino from 'pino';
import { isJsonObject } from '../../contract/json.ts';
import { type RefusalCode, refusalBody, refusalStatus } from '../../errors.ts';
import { CREDENTIAL_HEADERS } from '../../upstream/credentials.ts';
import { type PersistedOperations, sha256 } from '../protection/limits.ts';
import type { OriginPolicy } from '../protection/origin-check.ts';
import type { GraphQLCaller } from './graphql-call.ts';
import { createResourceUpdates, WATCH_SUBSCRIPTION } from './resource-updates.ts';
import {
  CONVERSATION_TEMPLATE,
  listConversationResources,
  RESOURCE_DOCUMENTS,
  readConversationResource,
} from './resources.ts';
import { callOperationTool } from './tool-call.ts';
import { compileOperation } from './tool-schemas.ts';
import { TOOLS } from './tools.ts';
import { WAIT_SUBSCRIPTION, WAIT_TOOL, waitForAgent } from './wait-tool.ts';

/** The endpoint's path. */
const MCP_PATH = '/mcp';

/** Limits of the MCP endpoint. */
export interface McpLimits {
  /** `MCP_MAX_BODY_BYTES`: largest request body. @default 1048576 */
  maxBodyBytes: number;
  /** `MCP_MAX_CONCURRENT`: MCP requests in flight at once on this process (waits and listen streams included). @default 256 */
  maxConcurrent: number;
  /** `MCP_MAX_RESOURCE_SUBSCRIPTIONS`: conversations one `subscriptions/listen` stream may watch. @default 20 */
  maxResourceSubscriptions: number;
}

/** What the route needs from the gateway. */
export interface McpRouteOptions {
  /** The schema Yoga serves: the tools are checked against it once, here. */
  schema: GraphQLSchema;
  /** Runs one GraphQL request in process (Yoga's `fetch`). */
  graphql: (request: Request) => Promise<Response>;
  /** The GraphQL path (`/graphql`). */
  graphqlEndpoint: string;
  /** The transport guard's Host/Origin policy. */
  policy: OriginPolicy;
  /**
   * The allow-list of persisted operations (`PERSISTED_OPERATIONS_FILE`), if any: the route admits its
   * own documents to it and sends them by hash, so agents keep their tools under the list.
   */
  persisted: PersistedOperations | null;
  limits: McpLimits;
  logger: pino.Logger;
  version: string;
}

/** Answers `/mcp` on the node server; `tryAnswer` is false for any other path. */
export interface McpRoute {
  tryAnswer(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

/**
 * The resource URIs of a `subscriptions/listen` request body, or null for any other body. Only read to
 * bound them and to hand them to the watchers: the SDK validates and answers the request itself.
 */
function listenedUris(body: Buffer): string[] | null {
  if (!body.includes('subscriptions/listen')) return null;
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (!isJsonObject(message) || message.method !== 'subscriptions/listen') return null;
  const notifications = isJsonObject(message.params) ? message.params.notifications : undefined;
  const uris = isJsonObject(notifications) ? notifications.resourceSubscriptions : undefined;
  return Array.isArray(uris) ? uris.filter((uri): uri is string => typeof uri === 'string') : [];
}

/** Builds the route: compiles every tool against `schema` (throws on a tool the schema cannot serve). */
export function createMcpRoute(options: McpRouteOptions): McpRoute {
  const tools = TOOLS.map((tool) => ({
    ...tool,
    ...compileOperation(options.schema, tool.document, tool.resultPath),
  }));
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const documents = [
    ...TOOLS.map((tool) => tool.document),
    WAIT_SUBSCRIPTION,
    WATCH_SUBSCRIPTION,
    ...RESOURCE_DOCUMENTS,
  ];
  for (const document of documents.slice(TOOLS.length)) {
    const errors = validate(options.schema, parse(document));
    if (errors.length)
      throw new Error(`Invalid MCP operation: ${errors.map((error) => error.message).join('; ')}`);
  }
  options.persisted?.admit(documents);
  const hashes = options.persisted
    ? new Map(documents.map((document) => [document, sha256(document)]))
    : null;
  const listed = tools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: { title: tool.title, ...tool.annotations },
  }));
  listed.push({
    name: WAIT_TOOL.name,
    title: WAIT_TOOL.title,
    description: WAIT_TOOL.description,
    inputSchema: WAIT_TOOL.inputSchema as never,
    outputSchema: WAIT_TOOL.outputSchema as never,
    annotations: WAIT_TOOL.annotations,
  });

  const graphqlUrl = `http://gateway${options.graphqlEndpoint}`;
  const updates = createResourceUpdates(options.logger);
  /** The MCP request's caller: its credential headers (the ones GraphQL reads), nothing else. */
  const callerOf = (headers: Headers | undefined): GraphQLCaller => {
    const credentials = new Headers();
    for (const name of CREDENTIAL_HEADERS) {
      const value = headers?.get(name);
      if (value) credentials.set(name, value);
    }
    return { graphql: options.graphql, url: graphqlUrl, credentials, hashes };
  };

  /**
   * One server per HTTP request (the SDK's factory), with the request's own credential headers in its
   * closure. Only the 2026-07-28 era may subscribe to resources (`subscriptions/listen`, one long POST);
   * 2025's `resources/subscribe` needs a session and its GET stream, which this stateless endpoint has not.
   */
  const serverFor = (era: 'legacy' | 'modern', caller: GraphQLCaller, signal: AbortSignal) => {
    const server = new Server(
      { name: 'conversation-gateway', version: options.version },
      { capabilities: { tools: {}, resources: era === 'modern' ? { subscribe: true } : {} } },
    );
    server.setRequestHandler('tools/list', () => ({ tools: listed }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      if (request.params.name === WAIT_TOOL.name) {
        // Cancelled by the client (`notifications/cancelled`, the handler's signal) or gone (HTTP close).
        const cancelled = AbortSignal.any([signal, ctx.mcpReq.signal]);
        const progressToken = request.params._meta?.progressToken;
        const result = await waitForAgent(request.params.arguments ?? {}, {
          caller,
          signal: cancelled,
          ...(progressToken === undefined
            ? {}
            : {
                progress: (progress: number, message: string) =>
                  ctx.mcpReq.notify({
                    method: 'notifications/progress',
                    params: { progressToken, progress, message },
                  }),
              }),
        });
        return server.projectCallToolResult(result, WAIT_TOOL.outputSchema as never);
      }
      const tool = byName.get(request.params.name);
      if (!tool)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      const result = await callOperationTool(tool, request.params.arguments ?? {}, caller, signal);
      return server.projectCallToolResult(result, tool.outputSchema);
    });
    server.setRequestHandler('resources/templates/list', () => ({
      resourceTemplates: [CONVERSATION_TEMPLATE],
    }));
    server.setRequestHandler('resources/list', (request) =>
      listConversationResources(caller, request.params?.cursor, signal),
    );
    server.setRequestHandler('resources/read', (request) =>
      readConversationResource(caller, request.params.uri, signal),
    );
    return server;
  };

  let inFlight = 0;
  const controllers = new Set<AbortController>();
  // The factory runs inside handler.fetch; the node request's headers travel on the web Request.
  const handler = createMcpHandler(
    (ctx) => {
      const request = ctx.requestInfo;
      return serverFor(ctx.era, callerOf(request?.headers), request?.signal ?? new AbortController().signal);
    },
    {
      maxRequestBodySize: options.limits.maxBodyBytes,
      // Listen streams are MCP requests too: MCP_MAX_CONCURRENT bounds them before the SDK does.
      maxSubscriptions: options.limits.maxConcurrent,
      bus: updates.bus,
      onerror: (error) => options.logger.debug({ err: { message: error.message } }, 'mcp request refused'),
    },
  );

  const refuse = (res: ServerResponse, code: RefusalCode, message?: string) => {
    const body = refusalBody(code, message);
    res.writeHead(refusalStatus(code), {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const controller = new AbortController();
    controllers.add(controller);
    res.once('close', () => {
      // The client went away before the answer was written (a wait or a listen stream it dropped).
      if (!res.writableFinished) controller.abort();
      controllers.delete(controller);
    });
    let body: Buffer | undefined;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > options.limits.maxBodyBytes) {
          refuse(
            res,
            'PAYLOAD_TOO_LARGE',
            `An MCP request body may hold at most ${options.limits.maxBodyBytes} bytes.`,
          );
          req.destroy();
          return;
        }
        chunks.push(chunk);
      }
      body = Buffer.concat(chunks);
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? MCP_PATH}`, {
      method: req.method ?? 'GET',
      headers,
      ...(body ? { body: new Uint8Array(body) } : {}),
      signal: controller.signal,
    });
    const uris = body ? listenedUris(body) : null;
    if (uris && uris.length > options.limits.maxResourceSubscriptions) {
      refuse(
        res,
        'QUERY_LIMIT_EXCEEDED',
        `One subscriptions/listen may watch at most ${options.limits.maxResourceSubscriptions} resources.`,
      );
      return;
    }
    const response = await (uris
      ? updates.withListen({ caller: callerOf(headers), uris }, () => handler.fetch(request))
      : handler.fetch(request));
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    if (!response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      // A JSON answer (or none) is written whole: no web-stream adapter for a body already complete.
      const answer = Buffer.from(await response.arrayBuffer());
      out['content-length'] = String(answer.length);
      res.writeHead(response.status, out);
      res.end(answer);
      return;
    }
    res.writeHead(response.status, out);
    Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(res);
  }

  return {
    tryAnswer(req, res) {
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      if ((query < 0 ? url : url.slice(0, query)) !== MCP_PATH) return false;
      const refusal = options.policy.check({ host: req.headers.host, origin: req.headers.origin });
      if (refusal) {
        refuse(res, refusal.code, refusal.message);
        return true;
      }
      if (inFlight >= options.limits.maxConcurrent) {
        refuse(res, 'RATE_LIMITED', `At most ${options.limits.maxConcurrent} MCP requests may run at once.`);
        return true;
      }
      inFlight++;
      res.once('close', () => inFlight--);
      serve(req, res).catch((error: unknown) => {
        options.logger.warn({ err: { message: (error as Error).message } }, 'mcp request failed');
        if (!res.headersSent) refuse(res, 'INTERNAL_SERVER_ERROR');
        else res.destroy();
      });
      return true;
    },
    async close() {
      for (const controller of controllers) controller.abort();
      await handler.close();
    },
  };
}
