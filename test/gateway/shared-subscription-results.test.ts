/**
 * The fan-out plugin: subscribers receiving the same event object with the same operation share one
 * execution; different operations do not; leaving a subscription releases its source.
 * (End to end, every test in test/live/ runs through the plugin inside the real gateway.)
 */
import {
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLInt,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { subscribeSharingResults } from '../../src/gateway/websocket/shared-subscription-results.ts';

interface Harness {
  schema: GraphQLSchema;
  /** Field executions so far. */
  executions: () => number;
  /** Sources whose iteration ended (return() reached the generator). */
  released: () => number;
}

/** A schema whose subscription yields the same three event objects to every subscriber. */
function harness(): Harness {
  const events = [{ n: 1 }, { n: 2 }, { n: 3 }];
  let executions = 0;
  let released = 0;
  const Event = new GraphQLObjectType<{ n: number }>({
    name: 'Event',
    fields: {
      n: {
        type: GraphQLInt,
        args: { plus: { type: GraphQLInt } },
        resolve: (event, args: { plus?: number | null }) => {
          executions++;
          return event.n + (args.plus ?? 0);
        },
      },
      label: { type: GraphQLString, resolve: (event) => `event ${event.n}` },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        events: {
          type: Event,
          args: { fail: { type: GraphQLString } },
          subscribe: (_root, args: { fail?: string | null }) => {
            // Like the real resolver: bad arguments throw before any stream exists.
            if (args.fail) throw new Error(args.fail);
            return (async function* () {
              try {
                yield* events;
                // Stay open like a live stream until the subscriber leaves.
                await new Promise(() => {});
              } finally {
                released++;
              }
            })();
          },
          resolve: (event: unknown) => event,
        },
      },
    }),
  });
  return { schema, executions: () => executions, released: () => released };
}

function args(schema: GraphQLSchema, query: string, variables: Record<string, unknown> = {}): ExecutionArgs {
  return { schema, document: parse(query), variableValues: variables, contextValue: {} };
}

async function take(iterator: AsyncIterableIterator<ExecutionResult>, count: number) {
  const results: ExecutionResult[] = [];
  for (let i = 0; i < count; i++) {
    const step = await iterator.next();
    if (step.done) break;
    results.push(step.value);
  }
  return results;
}

function asIterator(result: Awaited<ReturnType<typeof subscribeSharingResults>>) {
  if (!(Symbol.asyncIterator in result)) throw new Error(`expected a stream, got ${JSON.stringify(result)}`);
  return result;
}

const QUERY = 'subscription S($plus: Int) { events { n(plus: $plus) label } }';

describe('subscribeSharingResults', () => {
  it('executes each event once for subscribers with the same operation, and both get the same data', async () => {
    const h = harness();
    const document = parse(QUERY);
    const first = asIterator(
      await subscribeSharingResults({ schema: h.schema, document, variableValues: { plus: 10 } }),
    );
    const second = asIterator(
      await subscribeSharingResults({ schema: h.schema, document, variableValues: { plus: 10 } }),
    );
    const a = await take(first, 3);
    const b = await take(second, 3);
    const expected = [11, 12, 13].map((n) => ({ data: { events: { n, label: `event ${n - 10}` } } }));
    expect(a).toEqual(expected);
    expect(b).toEqual(expected);
    expect(h.executions()).toBe(3);
    await first.return?.();
    await second.return?.();
  });

  it('executes separately when the variables differ', async () => {
    const h = harness();
    const one = asIterator(await subscribeSharingResults(args(h.schema, QUERY, { plus: 1 })));
    const two = asIterator(await subscribeSharingResults(args(h.schema, QUERY, { plus: 2 })));
    expect((await take(one, 3)).map((r) => (r.data as { events: { n: number } }).events.n)).toEqual([
      2, 3, 4,
    ]);
    expect((await take(two, 3)).map((r) => (r.data as { events: { n: number } }).events.n)).toEqual([
      3, 4, 5,
    ]);
    expect(h.executions()).toBe(6);
    await one.return?.();
    await two.return?.();
  });

  it('releases the source when the subscriber leaves', async () => {
    const h = harness();
    const stream = asIterator(await subscribeSharingResults(args(h.schema, QUERY)));
    await take(stream, 1);
    expect(h.released()).toBe(0);
    await expect(stream.return?.()).resolves.toEqual({ done: true, value: undefined });
    expect(h.released()).toBe(1);
  });

  it('answers a failing subscribe resolver with an error result, not a stream', async () => {
    const h = harness();
    const result = await subscribeSharingResults(
      args(h.schema, 'subscription { events(fail: "no such conversation") { label } }'),
    );
    expect(Symbol.asyncIterator in result).toBe(false);
    expect((result as ExecutionResult).errors?.map((e) => e.message)).toEqual(['no such conversation']);
  });
});
