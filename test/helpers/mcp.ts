/**
 * What the MCP tests read from a tool call, whichever SDK client (v1 or v2) made it.
 */

/** A `tools/call` result as both SDK clients answer it. */
export interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

/** The `{"error": {"code"}}` of an `isError` tool result. */
export const toolErrorCode = (result: ToolResult): string | undefined =>
  JSON.parse(result.content[0]?.text ?? '{}').error?.code;
