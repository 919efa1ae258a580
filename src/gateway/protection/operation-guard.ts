/**
 * One protection of an operation as plain functions: what refuses an operation before anything of it
 * runs, and what wraps the execution of one that runs. Envelop runs a guard as a plugin
 * ({@link guardPlugin}: Yoga's pipeline, graphql-ws); the texts the HTTP fast path has prepared run the
 * same guards in the same order without envelop ({@link runGuarded}, gateway/compiled/prepared-operations.ts).
 * One definition, two callers: the refusals and wraps cannot drift apart.
 */
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.ts';

/** The arguments of a query or mutation, with the gateway's context. */
export type GuardedArgs = ExecutionArgs & { contextValue: GatewayContext };

/** An execute function as envelop and prepared operations call it. */
export type GuardedExecute = (args: GuardedArgs) => unknown;

/** A refusal: the operation's whole answer. Null lets the operation go on. */
type Refusal = ExecutionResult | null;

/** One protection (variable check, budget, rate limit, shutdown, deadline). An async `refuse` answers a native Promise. */
export interface OperationGuard {
  /** The answer of a refused operation (nothing of it has run), or null. */
  refuse?(args: GuardedArgs): Refusal | Promise<Refusal>;
  /** `refuse` answers subscriptions too, at subscribe. */
  readonly refusesSubscriptions?: boolean;
  /** Wraps the execute function of a query or mutation that no guard refused. */
  wrapExecute?(execute: GuardedExecute): GuardedExecute;
}

/** The guard as an envelop plugin: `refuse` stops the operation, `wrapExecute` wraps envelop's execute function. */
export function guardPlugin(guard: OperationGuard): Plugin<GatewayContext> {
  const { refuse, wrapExecute } = guard;
  const plugin: Plugin<GatewayContext> = {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const go = (refusal: Refusal) => {
        if (refusal) setResultAndStopExecution(refusal);
        else if (wrapExecute) setExecuteFn(wrapExecute(executeFn as GuardedExecute) as never);
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

/**
 * Runs the guards in order as envelop would: the first refusal is the answer; otherwise each guard's
 * wrap goes around the execute function (later guards outermost) and it runs. `refused` says which.
 */
export async function runGuarded(
  guards: readonly OperationGuard[],
  args: GuardedArgs,
  execute: GuardedExecute,
): Promise<{ result: ExecutionResult; refused: boolean }> {
  let wrapped = execute;
  for (const guard of guards) {
    if (guard.refuse) {
      let refusal = guard.refuse(args);
      if (refusal instanceof Promise) refusal = await refusal;
      if (refusal) return { result: refusal, refused: true };
    }
    if (guard.wrapExecute) wrapped = guard.wrapExecute(wrapped);
  }
  return { result: (await wrapped(args)) as ExecutionResult, refused: false };
}
