/**
 * src/gateway/execute-hooks.ts: plugins whose execute hooks run as one envelop hook behave exactly as
 * the same plugins under envelop's own loop: the same hooks and callbacks in the same order, the same
 * execute function, the same stop, the same result, the same failure. Each case runs one operation
 * through two envelop instances (the plugins as they are, and combined) and compares what happened.
 */
import {
  type ExecutionArgs,
  type ExecutionResult,
  execute,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
} from 'graphql';
import { envelop, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { withExecuteHooksCombined } from '../../src/gateway/execute-hooks.ts';

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: { hello: { type: GraphQLString, resolve: () => 'world' } },
  }),
});
const document = parse('{ hello }');

type Execute = (args: ExecutionArgs) => unknown;

/** What one run did: its calls in order and its answer (or failure). */
interface Run {
  calls: string[];
  outcome: unknown;
}

/** A test plugin set that records into `calls`; `behaviour` picks what the third plugin does. */
function plugins(calls: string[], behaviour: 'plain' | 'stop' | 'throw' | 'async-done'): Plugin[] {
  const wrap =
    (name: string, executeFn: Execute): Execute =>
    async (args) => {
      calls.push(`${name} runs`);
      return executeFn(args);
    };
  return [
    {
      onExecute({ executeFn, setExecuteFn }) {
        calls.push('first');
        setExecuteFn(wrap('first wrapper', executeFn as Execute) as never);
        return {
          onExecuteDone({ result, setResult }) {
            calls.push(`first done: ${JSON.stringify(result)}`);
            setResult({ ...(result as ExecutionResult), extensions: { first: true } });
          },
        };
      },
    },
    {
      async onExecute({ args }) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        calls.push(`second (async) sees ${Object.keys(args.contextValue as object).join(',')}`);
        return {
          async onExecuteDone({ result }) {
            await Promise.resolve();
            calls.push(`second done: ${JSON.stringify(result)}`);
          },
        };
      },
    },
    {
      onExecute({ setResultAndStopExecution, extendContext }) {
        calls.push('third');
        extendContext({ third: true } as never);
        if (behaviour === 'stop') setResultAndStopExecution({ data: { stopped: true } });
        if (behaviour === 'throw') throw new Error('third failed');
        return {
          onExecuteDone({ result, setResult }) {
            calls.push(`third done: ${JSON.stringify(result)}`);
            if (behaviour !== 'async-done') return;
            return Promise.resolve().then(() => setResult({ data: { replaced: 'later' } }));
          },
        };
      },
    },
    {
      // Another hook (not execute) stays where it was.
      onParse() {
        calls.push('fourth parses');
      },
      onExecute({ executeFn, setExecuteFn, context }) {
        calls.push(`fourth sees third: ${(context as { third?: boolean }).third === true}`);
        setExecuteFn(wrap('fourth wrapper', executeFn as Execute) as never);
      },
    },
    {
      onExecute() {
        calls.push('fifth');
        return {
          onExecuteDone({ result }) {
            calls.push(`fifth done: ${JSON.stringify(result)}`);
          },
        };
      },
    },
  ];
}

/** The engine as Yoga installs it: the first plugin sets graphql-js' execute. */
const engine: Plugin = {
  onParse({ setParseFn }) {
    setParseFn(parse);
  },
  onExecute({ setExecuteFn }) {
    setExecuteFn(execute as never);
  },
};

async function runWith(combined: boolean, behaviour: Parameters<typeof plugins>[1]): Promise<Run> {
  const calls: string[] = [];
  const set = plugins(calls, behaviour);
  const getEnveloped = envelop({
    plugins: [engine, ...(combined ? withExecuteHooksCombined(set) : set)],
  });
  const enveloped = getEnveloped({ request: 'r' });
  enveloped.parse('{ hello }');
  let outcome: unknown;
  try {
    outcome = await enveloped.execute({ schema, document, contextValue: await enveloped.contextFactory() });
  } catch (error) {
    outcome = `rejected: ${(error as Error).message}`;
  }
  return { calls, outcome: JSON.parse(JSON.stringify(outcome)) };
}

describe('execute hooks combined into one', () => {
  for (const behaviour of ['plain', 'stop', 'throw', 'async-done'] as const) {
    it(`runs as envelop runs them: ${behaviour}`, async () => {
      const expected = await runWith(false, behaviour);
      const actual = await runWith(true, behaviour);
      expect(actual).toEqual(expected);
      // The comparison is only worth something if the case did what it is named for.
      if (behaviour === 'plain') {
        expect(expected.calls).toContain('fourth wrapper runs');
        expect(expected.outcome).toEqual({ data: { hello: 'world' }, extensions: { first: true } });
      }
      if (behaviour === 'stop') {
        expect(expected.calls).not.toContain('fifth');
        expect(expected.calls).toContain('third done: {"data":{"stopped":true},"extensions":{"first":true}}');
      }
      if (behaviour === 'throw') expect(expected.outcome).toBe('rejected: third failed');
      if (behaviour === 'async-done')
        expect(expected.calls.at(-1)).toBe('fifth done: {"data":{"replaced":"later"}}');
    });
  }

  it('leaves a single execute hook, and plugins without one, as they are', () => {
    const only: Plugin = { onExecute: () => undefined };
    const other: Plugin = { onParse: () => undefined };
    expect(withExecuteHooksCombined([only, other])).toEqual([only, other]);
    const combined = withExecuteHooksCombined([only, other, { onExecute: () => undefined }]);
    expect(combined).toHaveLength(4);
    expect(combined.filter((plugin) => plugin.onExecute)).toHaveLength(1);
  });
});
