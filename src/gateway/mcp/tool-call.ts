/**
 * Runs one operation-backed tool (tools.ts) as the MCP caller and shapes its answer as a tool result:
 * the result field's value as `structuredContent`, or a failure as `isError` with the gateway's code,
 * so the agent can read it and correct itself (never a protocol error).
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { failureOf, type GraphQLCaller, runOperation } from './graphql-call.ts';

/** The catalogue code of each domain error type a tool's mutation can answer with. */
const CODE_OF_ERROR_TYPE: Record<string, string> = {
  ConversationNotFoundError: 'CONVERSATION_NOT_FOUND',
  ConversationUnavailableError: 'CONVERSATION_UNREACHABLE',
  PermissionDeniedError: 'PERMISSION_DENIED',
  UpstreamValidationError: 'UPSTREAM_VALIDATION',
  UpstreamDomainError: 'UPSTREAM_REFUSED',
};

/** A failed call: `isError` with `{"error": {"code", "message"}}` as its text. */
export function toolError(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message } }) }] };
}

/** What a tool runs. */
export interface OperationTool {
  document: string;
  operationName: string;
  resultPath: string;
  /** Its input schema: its properties are the operation's variables. */
  inputSchema: Record<string, unknown> & { properties?: Record<string, unknown> };
}

/** Runs `tool` with `args` as the caller. */
export async function callOperationTool(
  tool: OperationTool,
  args: Record<string, unknown>,
  caller: GraphQLCaller,
  signal: AbortSignal,
): Promise<CallToolResult> {
  // GraphQL ignores a variable its operation does not declare; the input schema refuses it.
  const unknown = Object.keys(args).filter((name) => !Object.hasOwn(tool.inputSchema.properties ?? {}, name));
  if (unknown.length > 0) return toolError('BAD_USER_INPUT', `Unknown argument: ${unknown.join(', ')}.`);
  const body = await runOperation(
    caller,
    { query: tool.document, operationName: tool.operationName, variables: args },
    signal,
  );
  const first = body.errors?.[0];
  if (first) {
    const failure = failureOf(first);
    return toolError(failure.code, failure.message);
  }
  const value = body.data?.[tool.resultPath] as Record<string, unknown> | null | undefined;
  if (value === null || value === undefined)
    return toolError('CONVERSATION_NOT_FOUND', 'No conversation with this id is visible to the caller.');
  const typename = typeof value.__typename === 'string' ? value.__typename : '';
  if (typename.endsWith('Error'))
    return toolError(CODE_OF_ERROR_TYPE[typename] ?? typename, String(value.message ?? typename));
  const structuredContent = { [tool.resultPath]: value };
  return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
}
