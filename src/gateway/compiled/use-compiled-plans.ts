/**
 * gateway/compiled/: the engine-free path. A query whose document the gateway has parsed before (Yoga
 * caches parsed documents, so the same object comes back for the same text) runs as a compiled plan
 * (query-plan.ts) instead of through graphql-jit: the schema's resolvers straight into the answer's
 * `data`. Installed where graphql-jit is, so every other plugin (limits, budget, rate limit, deadline,
 * observers, masking) wraps it exactly as it wraps the engine.
 *
 * Where the plan cannot answer as the engine would (an error, a null where none may be, anything it
 * does not cover), the engine runs the operation over the plan's recorded upstream calls
 * (upstream-replay.ts): the answer is the engine's own, byte for byte, and the upstream is not asked
 * twice. `verify` runs both on every covered operation, answers the engine's result and reports any
 * difference: the test suites run in that mode (the differential test, test/gateway/compiled-plans.test.ts).
 */
import type { DocumentNode, ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.ts';
import type { UpstreamSession } from '../../upstream/port/upstream.ts';
import { compileQueryPlan, type QueryPlan } from './query-plan.ts';
import { UpstreamCallRecord } from './upstream-replay.ts';

/** `on`: plans answer; `off`: the engine always; `verify`: both run, the engine answers, each comparison is reported. */
export type CompiledPlansMode = 'on' | 'off' | 'verify';

/** `verify`: a covered operation's answer from its plan and from the engine, serialized. */
export interface PlanComparison {
  operationName: string | undefined;
  /** Null when the plan gave up (the engine answered alone, as in `on`). */
  plan: string | null;
  engine: string;
}

/** Options of {@link useCompiledPlans}. */
export interface CompiledPlansOptions {
  mode: CompiledPlansMode;
  /** The operation's context with another upstream session (and loaders over it): root's context.ts. */
  withSession(context: GatewayContext, session: UpstreamSession): GatewayContext;
  /** `verify` only: told of every comparison. */
  onComparison?(comparison: PlanComparison): void;
}

/** An execute function (graphql-jit's, or a plan's in front of it). */
export type Execute = (args: ExecutionArgs) => unknown;

/** Plans by document and operation name; null where a document gets none. */
const plans = new WeakMap<DocumentNode, Map<string, QueryPlan | null>>();

function planOf(args: Pick<ExecutionArgs, 'schema' | 'document' | 'operationName'>): QueryPlan | null {
  let byName = plans.get(args.document);
  if (!byName) {
    byName = new Map();
    plans.set(args.document, byName);
  }
  const name = args.operationName ?? '';
  let plan = byName.get(name);
  if (plan === undefined) {
    plan = compileQueryPlan(args.schema, args.document, args.operationName);
    byName.set(name, plan);
  }
  return plan;
}

/** The plugin; place it right after graphql-jit's, whose execute function it falls back to. */
export function useCompiledPlans(options: CompiledPlansOptions): Plugin<GatewayContext> {
  if (options.mode === 'off') return {};
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const plan = planOf(args);
      if (plan === null) return;
      const engine = executeFn as Execute;
      setExecuteFn((executeArgs) => runPlan(plan, executeArgs, engine, options) as never);
    },
  };
}

/**
 * `engine` with the document's plan in front of it, as the plugin installs it (`engine` itself when the
 * document gets no plan, or plans are off): for the HTTP fast path's prepared operations.
 */
export function withCompiledPlan(
  options: CompiledPlansOptions,
  prepared: Pick<ExecutionArgs, 'schema' | 'document' | 'operationName'>,
  engine: Execute,
): Execute {
  if (options.mode === 'off') return engine;
  const plan = planOf(prepared);
  return plan === null ? engine : (executeArgs) => runPlan(plan, executeArgs, engine, options);
}

async function runPlan(
  plan: QueryPlan,
  args: ExecutionArgs,
  engine: Execute,
  options: CompiledPlansOptions,
): Promise<unknown> {
  const context = args.contextValue as GatewayContext;
  const record = new UpstreamCallRecord();
  const replayed = () => ({
    ...args,
    contextValue: options.withSession(context, record.replaying(context.upstream)),
  });
  let data: Record<string, unknown> | null;
  try {
    data = await plan.execute({
      rootValue: args.rootValue,
      contextValue: options.withSession(context, record.recording(context.upstream)),
      variableValues: args.variableValues,
    });
  } catch {
    // Whatever the plan met, the engine answers it, over the calls the plan already made.
    if (options.mode !== 'verify') return engine(replayed());
    data = null;
  }
  const result: ExecutionResult | null = data && { data };
  if (options.mode !== 'verify') return result;
  const engineResult = await engine(replayed());
  options.onComparison?.({
    operationName: args.operationName ?? undefined,
    plan: result && JSON.stringify(result),
    engine: JSON.stringify(engineResult),
  });
  return engineResult;
}
