/**
 * Runs the execute hooks of a run of consecutive plugins as one envelop hook.
 *
 * Envelop calls each plugin's `onExecute` through its maybe-promise helpers: per hook an iterator step
 * and a chain of "fake promise" objects and closures, then the same again for each `onExecuteDone`.
 * With the gateway's eight execution plugins (graphql-jit, compiled plans, observers, variable check,
 * budget, rate limit, shutdown, deadline) that was some 20 KB of garbage and a few percent of the CPU
 * of every query (bench/ab.ts --alloc-prof). Here the hooks run in a plain loop, with exactly envelop's
 * rules: each hook sees the execute function the hooks before it set; a hook that sets a result stops
 * the hooks after it (its own `onExecuteDone` still runs); `onExecuteDone` callbacks run in order, each
 * seeing the result the ones before it set; a hook or callback that returns a promise is awaited
 * before the next one runs (only then does this allocate a promise).
 *
 * Every other hook of those plugins (onSubscribe, onParse, ...) stays where it was.
 */
import type { Plugin } from 'graphql-yoga';

type AnyPlugin = Plugin;
type ExecuteHook = NonNullable<AnyPlugin['onExecute']>;
type ExecutePayload = Parameters<ExecuteHook>[0];
/** What an execute hook answers, once awaited: nothing, or its onExecuteDone. */
type ExecuteHookReturn = Awaited<ReturnType<ExecuteHook>>;
type ExecuteHookResult = Exclude<ExecuteHookReturn, void>;
type DoneHook = NonNullable<ExecuteHookResult['onExecuteDone']>;
type DonePayload = Parameters<DoneHook>[0];
type DoneHookResult = Exclude<Awaited<ReturnType<DoneHook>>, void>;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null | undefined)?.then === 'function';
}

/**
 * Calls `step(i)` for i = from, from + 1, ... while it answers `true` (go on); synchronously until a
 * step returns a promise, then after it settles. Answers when the last step has run.
 */
function runSteps(
  from: number,
  count: number,
  step: (index: number) => boolean | PromiseLike<boolean>,
): void | Promise<void> {
  for (let index = from; index < count; index++) {
    const next = step(index);
    if (next === false) return;
    if (next !== true) {
      return Promise.resolve(next).then((goOn) => (goOn ? runSteps(index + 1, count, step) : undefined));
    }
  }
}

/** Stream hooks (incremental results) returned by several `onExecuteDone` callbacks, called in order. */
function streamHooks(results: readonly DoneHookResult[]): DoneHookResult | undefined {
  if (results.length === 0) return undefined;
  if (results.length === 1) return results[0];
  return {
    onNext: (payload) => {
      for (const result of results) result.onNext?.(payload);
    },
    onEnd: () => {
      for (const result of results) result.onEnd?.();
    },
  };
}

/** One `onExecuteDone` running every collected callback in order. */
function executeDone(afterCalls: readonly ExecuteHookResult[]): DoneHook {
  return (outer: DonePayload) => {
    let result = outer.result;
    const setResult = (next: typeof result) => {
      result = next;
      outer.setResult(next);
    };
    const streams: DoneHookResult[] = [];
    const done = runSteps(0, afterCalls.length, (index) => {
      const callback = afterCalls[index]?.onExecuteDone;
      if (callback === undefined) return true;
      const returned = callback({ args: outer.args, result, setResult });
      if (!isThenable(returned)) {
        if (returned) streams.push(returned);
        return true;
      }
      return Promise.resolve(returned).then((awaited) => {
        if (awaited) streams.push(awaited);
        return true;
      });
    });
    return done === undefined ? streamHooks(streams) : done.then(() => streamHooks(streams));
  };
}

/**
 * `plugins` with their `onExecute` hooks taken out and run, in the same order, by one plugin placed
 * before them. Meant for a run of plugins with nothing between them in the plugin list (yoga.ts), so
 * the order against every other plugin's hooks is the one envelop would have kept.
 */
export function withExecuteHooksCombined(plugins: readonly AnyPlugin[]): AnyPlugin[] {
  const hooks: { plugin: AnyPlugin; onExecute: ExecuteHook }[] = [];
  const rest = plugins.map((plugin) => {
    if (typeof plugin.onExecute !== 'function') return plugin;
    hooks.push({ plugin, onExecute: plugin.onExecute });
    const { onExecute: _combined, ...others } = plugin;
    return others;
  });
  if (hooks.length < 2) return [...plugins];

  const combined: AnyPlugin = {
    onExecute(outer: ExecutePayload) {
      let executeFn = outer.executeFn;
      let stopped = false;
      const afterCalls: ExecuteHookResult[] = [];
      const payload: ExecutePayload = {
        get executeFn() {
          return executeFn;
        },
        args: outer.args,
        setExecuteFn: (next) => {
          executeFn = next;
          outer.setExecuteFn(next);
        },
        setResultAndStopExecution: (result) => {
          stopped = true;
          outer.setResultAndStopExecution(result);
        },
        context: outer.context,
        extendContext: outer.extendContext,
      };
      const collect = (returned: ExecuteHookReturn): boolean => {
        if (returned) afterCalls.push(returned);
        return !stopped;
      };
      const ran = runSteps(0, hooks.length, (index) => {
        const hook = hooks[index] as (typeof hooks)[number];
        const returned = hook.onExecute.call(hook.plugin, payload);
        return isThenable(returned) ? Promise.resolve(returned).then(collect) : collect(returned);
      });
      const result = () => (afterCalls.length > 0 ? { onExecuteDone: executeDone(afterCalls) } : undefined);
      return ran === undefined ? result() : ran.then(result);
    },
  };
  return [combined, ...rest];
}
