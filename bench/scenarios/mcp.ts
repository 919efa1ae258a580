/**
 * Scenario "mcp" (`--only mcp`, both APIs): what the MCP endpoint adds to the GraphQL operation it runs.
 * A `tools/call` of `list_conversations` (`first: 20`, the list scenario's hot path) and of
 * `get_conversation` (one seeded id) through `/mcp`, against the same tool's operation (its document
 * from src/gateway/mcp/tools.ts, its name and the same variables: the body the tool hands to Yoga)
 * through `/graphql`, on the same gateway, alternating sides round after round: latency at one
 * connection, then throughput, latency and the gateway's CPU per call (/proc) at saturation. There is no
 * target: the rows say what a tool call costs over the operation behind it.
 *
 * The MCP side is a raw POST shaped as the SDK v2 client (`@modelcontextprotocol/client` 2.4.0, pinned
 * to 2026-07-28) sends a `tools/call`: no `initialize` (the revision is stateless), the protocol version,
 * client info and capabilities in `params._meta`, and the `Mcp-Method`, `Mcp-Name` and
 * `Mcp-Protocol-Version` headers. Before measuring, both sides must answer the same value (the tool's
 * `structuredContent` is the operation's result field) and make the same upstream calls (the gateway's
 * `upstream_requests_total`), so the difference is the MCP layer's alone.
 */
import { TOOLS } from '../../src/gateway/mcp/tools.ts';
import { alternateSides, type SideSummary } from '../lib/compare.ts';
import { type BenchContext, graphqlTarget } from '../lib/context.ts';
import {
  type HttpTarget,
  type LoadFigures,
  type LoadWithCpu,
  saturate,
  sequential,
  verify,
  withCpu,
} from '../lib/http-load.ts';
import { fmt, type Row, ratio, type ScenarioResult } from '../lib/report.ts';
import { round } from '../lib/stats.ts';
import { gatewayUpstreamCalls } from '../lib/upstream-calls.ts';

/** The revision the MCP side speaks: stateless, no `initialize`, version and capabilities per request. */
const PROTOCOL_VERSION = '2026-07-28';
/** `params._meta` of every request, as the SDK v2 client fills it. */
const META = {
  'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'conversation-gateway-bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The two sides, in the order the first round runs them. */
const SIDES = ['mcp', 'graphql'] as const;
type Side = (typeof SIDES)[number];

/** One tool call measured: the tool, its arguments, and what its result value must look like. */
interface ToolCase {
  tool: string;
  args: Record<string, unknown>;
  /** Throws when the result field's value is not the expected answer. */
  check(value: unknown): void;
}

/** A tool's definition from the gateway's own table, with its operation's name. */
function toolNamed(name: string): { document: string; operationName: string; resultPath: string } {
  const tool = TOOLS.find((candidate) => candidate.name === name);
  const operationName = tool && /^\s*(?:query|mutation)\s+(\w+)/.exec(tool.document)?.[1];
  if (!tool || !operationName) throw new Error(`no tool "${name}" with a named operation in tools.ts`);
  return { document: tool.document, operationName, resultPath: tool.resultPath };
}

/** The JSON-RPC answer of a `tools/call`, as far as the bench reads it. */
interface ToolAnswer {
  result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
  error?: unknown;
}

/**
 * Both sides of one tool call: the `tools/call` POST to `/mcp`, and the tool's operation POSTed to
 * `/graphql` with the body the tool sends to Yoga (query, operationName, variables) and its `accept`.
 */
function targetsOf(context: BenchContext, call: ToolCase): Record<Side, HttpTarget> {
  const tool = toolNamed(call.tool);
  const operation = graphqlTarget(context, tool.document, call.args, (data) =>
    call.check(data[tool.resultPath]),
  );
  const graphql: HttpTarget = {
    ...operation,
    headers: { ...operation.headers, accept: 'application/json' },
    body: JSON.stringify({ query: tool.document, operationName: tool.operationName, variables: call.args }),
  };
  const mcp: HttpTarget = {
    url: new URL('/mcp', context.gatewayUrl).href,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-session-api-key': context.key,
      'mcp-method': 'tools/call',
      'mcp-name': call.tool,
      'mcp-protocol-version': PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: call.tool, arguments: call.args, _meta: META },
    }),
    // A failed tool is a result with `"isError":true`, a protocol failure a JSON-RPC `"error"` member;
    // inside the result's text block both would be escaped (`\"error\"`), so neither matches there.
    isOk: (status, body) => status === 200 && !body.includes('"isError":true') && !body.includes('"error":'),
    check(status, body) {
      let answer: ToolAnswer;
      try {
        answer = JSON.parse(body) as ToolAnswer;
      } catch {
        throw new Error(`/mcp answered ${status} with no JSON body: ${body.slice(0, 300)}`);
      }
      const content = answer.result?.structuredContent;
      if (status !== 200 || answer.error || answer.result?.isError || !content)
        throw new Error(`/mcp answered ${status}: ${body.slice(0, 300)}`);
      call.check(content[tool.resultPath]);
    },
  };
  return { mcp, graphql };
}

/** Sends a target once and checks its answer; returns the answer's text. */
async function send(target: HttpTarget): Promise<string> {
  const response = await fetch(target.url, {
    method: target.method,
    headers: target.headers,
    ...(target.body !== undefined ? { body: target.body } : {}),
  });
  const text = await response.text();
  target.check(response.status, text);
  return text;
}

/** A difference as printed: `+0.35 ms`, or `-0.10 ms` where MCP came out faster. */
function signed(value: number, unit: string): string {
  return `${value < 0 ? '' : '+'}${fmt(value, unit)}`;
}

/** Measures one tool call on both sides and reports it as rows labelled with the tool. */
async function measureTool(
  context: BenchContext,
  call: ToolCase,
): Promise<{ rows: Row[]; details: Record<string, unknown> }> {
  const { resultPath } = toolNamed(call.tool);
  const targets = targetsOf(context, call);
  // Asked again for up to 15 s while they differ: freshly seeded conversations change status for a
  // few seconds after they start (`--only mcp` measures right after seeding), between the two reads.
  const settledUntil = performance.now() + 15_000;
  let answer: { mcp: string; graphql: string };
  let value: { mcp: string; graphql: string };
  for (;;) {
    answer = { mcp: await send(targets.mcp), graphql: await send(targets.graphql) };
    value = {
      mcp: JSON.stringify((JSON.parse(answer.mcp) as ToolAnswer).result?.structuredContent?.[resultPath]),
      graphql: JSON.stringify(
        (JSON.parse(answer.graphql) as { data?: Record<string, unknown> }).data?.[resultPath],
      ),
    };
    if (value.mcp === value.graphql || performance.now() > settledUntil) break;
    await new Promise((done) => setTimeout(done, 500));
  }
  const bytes = { mcp: Buffer.byteLength(answer.mcp), graphql: Buffer.byteLength(answer.graphql) };
  if (value.mcp !== value.graphql)
    throw new Error(
      `${call.tool}: /mcp and /graphql answered different values:\n  mcp:     ${value.mcp.slice(0, 300)}\n  graphql: ${value.graphql.slice(0, 300)}`,
    );
  const upstream = {
    mcp: await gatewayUpstreamCalls(context.gatewayUrl, targets.mcp),
    graphql: await gatewayUpstreamCalls(context.gatewayUrl, targets.graphql),
  };
  if (upstream.mcp.join('\n') !== upstream.graphql.join('\n'))
    throw new Error(
      `${call.tool}: /mcp and /graphql made different upstream calls:\n  mcp:     ${upstream.mcp.join(', ')}\n  graphql: ${upstream.graphql.join(', ')}`,
    );
  // Neither side's first-use work (V8 compiling its path) may land in a measured round.
  for (const side of SIDES) await saturate(targets[side], context.connections, 1);

  const single = await alternateSides<Side, LoadFigures>(context.rounds, SIDES, (side) =>
    sequential(targets[side], context.seconds),
  );
  const saturated = await alternateSides<Side, LoadWithCpu>(context.rounds, SIDES, (side) =>
    withCpu(context, () => saturate(targets[side], context.connections, context.seconds)),
  );
  // Checked again after load: a side that degraded into errors must not look fast.
  for (const side of SIDES) await verify(targets[side]);

  const one = (side: Side) => (single[side] as SideSummary<LoadFigures>).median;
  const full = (side: Side) => (saturated[side] as SideSummary<LoadWithCpu>).median;
  const addedP50 = round(one('mcp').p50Ms - one('graphql').p50Ms);
  const addedP99 = round(one('mcp').p99Ms - one('graphql').p99Ms);
  const cpu = { mcp: full('mcp').gatewayCpuMsPerRequest, graphql: full('graphql').gatewayCpuMsPerRequest };
  const errors = full('mcp').errors + full('graphql').errors;
  const row = (measure: string, mcp: string, graphql: string, derived: string): Row => ({
    scenario: 'mcp',
    measure: `${call.tool}: ${measure}`,
    gateway: `mcp ${mcp}`,
    direct: `graphql ${graphql}`,
    derived,
  });
  return {
    rows: [
      row(
        'p50 @1 conn',
        fmt(one('mcp').p50Ms, 'ms'),
        fmt(one('graphql').p50Ms, 'ms'),
        `${signed(addedP50, 'ms')} added`,
      ),
      row(
        'p99 @1 conn',
        fmt(one('mcp').p99Ms, 'ms'),
        fmt(one('graphql').p99Ms, 'ms'),
        `${signed(addedP99, 'ms')} added`,
      ),
      row(
        'gateway CPU ms per call',
        fmt(cpu.mcp),
        fmt(cpu.graphql),
        `ratio ${ratio(cpu.mcp, cpu.graphql)} (${signed(round(cpu.mcp - cpu.graphql), 'ms')}); svc ${fmt(full('mcp').serviceCpuMsPerRequest)} / ${fmt(full('graphql').serviceCpuMsPerRequest)}`,
      ),
      row(
        `req/s @${context.connections} conns`,
        fmt(full('mcp').requestsPerSecond),
        fmt(full('graphql').requestsPerSecond),
        `ratio ${ratio(full('mcp').requestsPerSecond, full('graphql').requestsPerSecond)}`,
      ),
      row(
        `p50/p99 @${context.connections} conns`,
        `${fmt(full('mcp').p50Ms)}/${fmt(full('mcp').p99Ms)} ms`,
        `${fmt(full('graphql').p50Ms)}/${fmt(full('graphql').p99Ms)} ms`,
        `${errors} errors; answer ${bytes.mcp} / ${bytes.graphql} B`,
      ),
    ],
    details: {
      arguments: call.args,
      oneConnection: single,
      saturation: saturated,
      addedP50Ms: addedP50,
      addedP99Ms: addedP99,
      cpuRatio: round(cpu.mcp / cpu.graphql),
      addedCpuMsPerCall: round(cpu.mcp - cpu.graphql),
      throughputRatio: round(full('mcp').requestsPerSecond / full('graphql').requestsPerSecond),
      answerBytes: bytes,
      upstreamCallsPerCall: upstream.graphql,
    },
  };
}

/** Runs the mcp scenario: `list_conversations` (first: 20), then `get_conversation` of a seeded id. */
export async function runMcp(context: BenchContext): Promise<ScenarioResult> {
  const id = context.conversationIds.at(-1);
  if (!id) throw new Error('the mcp scenario needs a seeded conversation');
  const cases: ToolCase[] = [
    {
      tool: 'list_conversations',
      args: { first: 20 },
      check(value) {
        const edges = (value as { edges?: unknown[] } | null)?.edges;
        if (edges?.length !== 20) throw new Error(`expected 20 edges, got ${edges?.length}`);
      },
    },
    {
      tool: 'get_conversation',
      args: { id },
      check(value) {
        const found = (value as { conversationId?: string } | null)?.conversationId;
        if (found !== id) throw new Error(`expected conversation ${id}, got ${found}`);
      },
    },
  ];
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const call of cases) {
    const measured = await measureTool(context, call);
    rows.push(...measured.rows);
    details[call.tool] = measured.details;
  }
  return { name: 'mcp', rows, details: { protocolVersion: PROTOCOL_VERSION, tools: details } };
}
