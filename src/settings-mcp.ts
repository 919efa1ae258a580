/**
 * The MCP endpoint's settings (the `mcp` group of `--help` and docs/configuration.md): whether `/mcp`
 * is served, and its limits (docs/mcp.md). Part of the one settings table (src/settings.ts), kept
 * apart so the table stays readable.
 */
import type { Setting } from './setting.ts';

export const MCP_SETTINGS: readonly Setting[] = [
  {
    flag: 'mcp',
    arg: '<bool>',
    group: 'mcp',
    env: 'MCP_ENDPOINT',
    defaultText: 'on',
    description:
      "serve the MCP endpoint `/mcp` (tools for agents, run as GraphQL operations with the caller's own credential; docs/mcp.md)",
  },
  {
    flag: 'mcp-max-body-bytes',
    arg: '<n>',
    group: 'mcp',
    env: 'MCP_MAX_BODY_BYTES',
    defaultText: '`1048576`',
    description: 'largest MCP request body (`PAYLOAD_TOO_LARGE` beyond)',
    integer: { fallback: 1048576, min: 1024, max: 67108864 },
  },
  {
    flag: 'mcp-max-concurrent',
    arg: '<n>',
    group: 'mcp',
    env: 'MCP_MAX_CONCURRENT',
    defaultText: '`256`',
    description: 'MCP requests one gateway process serves at once (`RATE_LIMITED` beyond)',
    integer: { fallback: 256, min: 1, max: 100000 },
  },
  {
    flag: 'mcp-max-resource-subscriptions',
    arg: '<n>',
    group: 'mcp',
    env: 'MCP_MAX_RESOURCE_SUBSCRIPTIONS',
    defaultText: '`20`',
    description:
      'conversations one `subscriptions/listen` stream may watch, each a live subscriber (`QUERY_LIMIT_EXCEEDED` beyond)',
    integer: { fallback: 20, min: 1, max: 1000 },
  },
];
