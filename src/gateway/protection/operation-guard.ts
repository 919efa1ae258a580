/**
 * One protection of an operation as plain functions: what refuses an operation before anything of it
 * runs, and what happens around the execution of one that runs. Envelop runs a guard as a plugin
 * ({@link guardPlugin}: Yoga's pipeline, graphql-ws); the texts the HTTP fast path has prepared run the
 * same guards in the same order without envelop ({@link firstRefusal} and {@link enterGuards},
 * gateway/compiled/prepared-operations.ts).
 * One definition, two callers: the refusals and wraps cannot drift apart.
 */
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.ts';

/** The arguments of a query or mutation, with the gateway's context. */
export type GuardedArgs = ExecutionArgs & { contextValue: GatewayContext };

/** An execute function as envelop calls it. */
type GuardedExecute = (args: GuardedArgs) => unknown;

/** A refusal: the operation's whole answer. Null lets the operation go on. */
type Refusal = ExecutionResult | null;

/** One protection (variable check, budget, rate limit, shutdown, deadline). An async `refuse` answers a native Promise. */
export interface OperationGuard {
  /** The answer of a refused operation (nothing of it has run), or null. */
  refuse?(args: GuardedArgs): Refusal | Promise<Refusal>;
  /** `refuse` answers subscriptions too, at subscribe. */
  readonly refusesSubscriptions?: boolean;
  /**
   * Runs as a query or mutation that no guard refused starts executing; the function it answers, if
   * any, runs once that execution has settled (answered, rejected or thrown). Both ends synchronous:
   * a guard costs no async function of its own per operation (each one held while the operation waits
   * on the upstream is heap a young-generation scavenge copies, see docs/performance.md).
   */
  enter?(args: GuardedArgs): GuardExit | undefined;
}

/** What a guard does when the execution it entered has settled. */
export type GuardExit = () => void;

/** The guard as an envelop plugin: `refuse` stops the operation, `enter` wraps envelop's execute function. */
export function guardPlugin(guard: OperationGuard): Plugin<GatewayContext> {
  const { refuse, enter } = guard;
  const plugin: Plugin<GatewayContext> = {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const go = (refusal: Refusal) => {
        if (refusal) setResultAndStopExecution(refusal);
        else if (enter) setExecuteFn(entered(enter, executeFn as GuardedExecute) as never);
      };
      const refusal = refuse ? refuse(args as GuardedArgs) : null;
      if (refusal instanceof Promise) return refusal.then(go);
      go(refusal);
      return undefined;
    },
  };
  if (refuse && guard.refusesSubscriptions) {
    plugin.onSubscribe = ({ args, setResultAndStopExecution }) => {
      const refusal = refuse(args as GuardedArgs);
      if (!(refusal instanceof Promise)) {
        if (refusal) setResultAndStopExecution(refusal);
        return;
      }
      return refusal.then((settled) => {
        if (settled) setResultAndStopExecution(settled);
      });
    };
  }
  return plugin;
}

/** `execute` inside one guard's `enter` and its exit, as envelop's execute function (later plugins outermost). */
function entered(enter: NonNullable<OperationGuard['enter']>, execute: GuardedExecute): GuardedExecute {
  return async (args) => {
    const exit = enter(args);
    try {
      return await execute(args);
    } finally {
      exit?.();
    }
  };
}

/**
 * The first refusal of the guards, asked in order as envelop asks its plugins (a later guard is not
 * asked once one refused), or null. Synchronous unless a guard answers a Promise.
 */
export function firstRefusal(
  guards: readonly OperationGuard[],
  args: GuardedArgs,
  from = 0,
): Refusal | Promise<Refusal> {
  for (let at = from; at < guards.length; at++) {
    const refuse = (guards[at] as OperationGuard).refuse;
    if (!refuse) continue;
    const refusal = refuse(args);
    if (refusal instanceof Promise) {
      return refusal.then((settled) => settled ?? firstRefusal(guards, args, at + 1));
    }
    if (refusal) return refusal;
  }
  return null;
}

/**
 * Enters the guards of an execution no guard refused, in the order envelop's wrapped execute
 * functions would run them (the last guard outermost, so first), and answers what runs once it has
 * settled: their exits, innermost first. A guard whose `enter` throws ends the operation as a throwing
 * execute function would, after the exits of the guards entered before it.
 */
export function enterGuards(guards: readonly OperationGuard[], args: GuardedArgs): GuardExit {
  const exits: GuardExit[] = [];
  const exitAll = () => {
    for (let at = exits.length - 1; at >= 0; at--) (exits[at] as GuardExit)();
  };
  try {
    for (let at = guards.length - 1; at >= 0; at--) {
      const exit = (guards[at] as OperationGuard).enter?.(args);
      if (exit) exits.push(exit);
    }
  } catch (error) {
    exitAll();
    throw error;
  }
  return exitAll;
}
