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
import {
  type CallToolResult,
  createMcpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
} from '@modelcontextprotocol/server';
import type { GraphQLSchema } from 'graphql';
import type pino from 'pino';
import { type RefusalCode, refusalBody, refusalStatus } from '../../errors.ts';
import { CREDENTIAL_HEADERS } from '../../upstream/credentials.ts';
import type { OriginPolicy } from '../protection/origin-check.ts';
import { compileOperation } from './tool-schemas.ts';
import { TOOLS } from './tools.ts';
import { WAIT_TOOL, waitForAgent } from './wait-tool.ts';

/** The endpoint's path. */
const MCP_PATH = '/mcp';

/** Limits of the MCP endpoint. */
export interface McpLimits {
  /** `MCP_MAX_BODY_BYTES`: largest request body. @default 1048576 */
  maxBodyBytes: number;
  /** `MCP_MAX_CONCURRENT`: MCP requests in flight at once on this process. @default 256 */
  maxConcurrent: number;
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
  limits: McpLimits;
  logger: pino.Logger;
  version: string;
}

/** Answers `/mcp` on the node server; `tryAnswer` is false for any other path. */
export interface McpRoute {
  tryAnswer(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

/** The catalogue code of each domain error type a tool's mutation can answer with. */
const CODE_OF_ERROR_TYPE: Record<string, string> = {
  ConversationNotFoundError: 'CONVERSATION_NOT_FOUND',
  ConversationUnavailableError: 'CONVERSATION_UNREACHABLE',
  PermissionDeniedError: 'PERMISSION_DENIED',
  UpstreamValidationError: 'UPSTREAM_VALIDATION',
  UpstreamDomainError: 'UPSTREAM_REFUSED',
};

function toolError(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message } }) }] };
}

/** Builds the route: compiles every tool against `schema` (throws on a tool the schema cannot serve). */
export function createMcpRoute(options: McpRouteOptions): McpRoute {
  const tools = TOOLS.map((tool) => ({
    ...tool,
    ...compileOperation(options.schema, tool.document, tool.resultPath),
  }));
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
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

  /** Runs a tool's operation as the caller whose credential headers are `credentials`. */
  async function call(
    name: string,
    args: Record<string, unknown>,
    credentials: Headers,
    signal: AbortSignal,
  ) {
    const tool = byName.get(name);
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const headers = new Headers(credentials);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json');
    const response = await options.graphql(
      new Request(`http://gateway${options.graphqlEndpoint}`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: tool.document, operationName: tool.operationName, variables: args }),
        signal,
      }),
    );
    const body = (await response.json()) as {
      data?: Record<string, unknown> | null;
      errors?: { message: string; extensions?: { code?: string } }[];
    };
    const first = body.errors?.[0];
    if (first) return toolError(first.extensions?.code ?? 'INTERNAL_SERVER_ERROR', first.message);
    const value = body.data?.[tool.resultPath] as Record<string, unknown> | null | undefined;
    if (value === null || value === undefined)
      return toolError('CONVERSATION_NOT_FOUND', 'No conversation with this id is visible to the caller.');
    const typename = typeof value.__typename === 'string' ? value.__typename : '';
    if (typename.endsWith('Error'))
      return toolError(CODE_OF_ERROR_TYPE[typename] ?? typename, String(value.message ?? typename));
    const structuredContent = { [tool.resultPath]: value };
    return {
      content: [{ type: 'text', text: JSON.stringify(structuredContent) }],
      structuredContent,
    } satisfies CallToolResult;
  }

  /** One server per HTTP request (the SDK's factory): the request's own credential headers in its closure. */
  const serverFor = (credentials: Headers, signal: AbortSignal) => {
    const server = new Server(
      { name: 'conversation-gateway', version: options.version },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler('tools/list', () => ({ tools: listed }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      if (request.params.name === WAIT_TOOL.name) {
        // Cancelled by the client (`notifications/cancelled`, the handler's signal) or gone (HTTP close).
        const cancelled = AbortSignal.any([signal, ctx.mcpReq.signal]);
        const progressToken = request.params._meta?.progressToken;
        const result = await waitForAgent(request.params.arguments ?? {}, {
          graphql: options.graphql,
          graphqlUrl: `http://gateway${options.graphqlEndpoint}`,
          credentials,
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
      const result = await call(request.params.name, request.params.arguments ?? {}, credentials, signal);
      return server.projectCallToolResult(result, byName.get(request.params.name)?.outputSchema);
    });
    return server;
  };

  let inFlight = 0;
  const controllers = new Set<AbortController>();
  // The factory runs inside handler.fetch; the node request's headers travel on the web Request.
  const handler = createMcpHandler(
    (ctx) => {
      const request = ctx.requestInfo;
      const credentials = new Headers();
      for (const name of CREDENTIAL_HEADERS) {
        const value = request?.headers.get(name);
        if (value) credentials.set(name, value);
      }
      return serverFor(credentials, request?.signal ?? new AbortController().signal);
    },
    {
      maxRequestBodySize: options.limits.maxBodyBytes,
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
      controller.abort();
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
    const response = await handler.fetch(request);
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    res.writeHead(response.status, out);
    if (!response.body) {
      res.end();
      return;
    }
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
