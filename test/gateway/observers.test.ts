/**
 * Observers (operation log, metrics, traces) can never fail an operation: errors of every origin are
 * read through one defensive `errorCode`, every observer call is guarded, and a subscription stream's
 * end is seen exactly once on every path. In-process Yoga (schema-level behaviour); the same paths
 * over real HTTP and graphql-ws are in test/hardening/operation-errors.test.ts.
 */
import { Writable } from 'node:stream';
import { createGraphQLError } from '@graphql-tools/utils';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { type ExecutionResult, GraphQLError, parse } from 'graphql';
import { GraphQLError as JitGraphQLError } from 'graphql-jit/dist/error';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it, onTestFinished } from 'vitest';
import { errorCode, errorCodes } from '../../src/gateway/observability/error-code.ts';
import { createLogger, operationLogObserver } from '../../src/gateway/observability/logging.ts';
import { GatewayMetrics } from '../../src/gateway/observability/metrics.ts';
import {
  flushEndedOperations,
  type ObservedOperation,
  type OperationObserver,
  OperationObservers,
  useOperationObservers,
} from '../../src/gateway/observability/operation-observer.ts';
import { startTracing, tracingObserver } from '../../src/gateway/observability/tracing.ts';

/** An error as graphql-jit builds it: a GraphQLError whose `extensions` is undefined. */
function jitError(message: string): GraphQLError {
  const error = Object.create(JitGraphQLError.prototype) as GraphQLError;
  (JitGraphQLError as unknown as (this: unknown, message: string) => void).call(error, message);
  return error;
}

const throwingGetter = new Proxy(
  {},
  {
    get() {
      throw new Error('a getter that throws');
    },
  },
);

/** One error of each origin an observer meets, with the code it must read. */
const ORIGINS: Array<[string, unknown, string]> = [
  ['graphql-js, coded', new GraphQLError('x', { extensions: { code: 'BAD_USER_INPUT' } }), 'BAD_USER_INPUT'],
  ['graphql-js, uncoded', new GraphQLError('x'), 'INTERNAL'],
  ['graphql-jit (extensions undefined)', jitError('Cannot return null for non-nullable field'), 'INTERNAL'],
  ['envelop / yoga', createGraphQLError('x', { extensions: { code: 'RATE_LIMITED' } }), 'RATE_LIMITED'],
  ['plain Error', new Error('x'), 'INTERNAL'],
  ['null', null, 'INTERNAL'],
  ['undefined', undefined, 'INTERNAL'],
  ['a string', 'boom', 'INTERNAL'],
  ['extensions null', { extensions: null }, 'INTERNAL'],
  ['code not a string', { extensions: { code: 42 } }, 'INTERNAL'],
  ['code not code-shaped', { extensions: { code: 'drop table; --' } }, 'INTERNAL'],
  ['getter that throws', throwingGetter, 'INTERNAL'],
  ['extensions getter that throws', { extensions: throwingGetter }, 'INTERNAL'],
];

describe('errorCode', () => {
  it.each(ORIGINS)('%s', (_origin, error, code) => {
    expect(jitError('x').extensions).toBeUndefined(); // the premise: jit leaves extensions out
    expect(errorCode(error)).toBe(code);
  });

  it('errorCodes is distinct codes in order, and total for non-arrays', () => {
    expect(errorCodes(ORIGINS.map(([, error]) => error))).toEqual([
      'BAD_USER_INPUT',
      'INTERNAL',
      'RATE_LIMITED',
    ]);
    expect(errorCodes(null)).toEqual([]);
  });
});

function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        callback();
      },
    }),
  });
  return { logger, lines };
}

const schema = createSchema({
  typeDefs: 'type Query { hello: String } type Subscription { ticks: Int }',
  resolvers: {
    Query: { hello: () => 'world' },
    Subscription: {
      ticks: {
        async *subscribe() {
          for (let tick = 1; tick <= 3; tick++) yield { ticks: tick };
        },
      },
    },
  },
});

async function run(yoga: ReturnType<typeof createYoga>, query: string) {
  const response = await yoga.fetch('http://gateway/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as ExecutionResult;
  // The observers are told of an operation's end in batches: this one's now.
  flushEndedOperations();
  return { status: response.status, body };
}

describe('the observers fed errors of every origin', () => {
  it('log, metrics and traces read them all; the answer is untouched', async () => {
    const { logger, lines } = capturedLogger();
    const metrics = new GatewayMetrics({
      upstreamSockets: () => 0,
      circuitState: () => 'closed',
      upstreamLoad: () => ({ active: 0, queued: 0 }),
    });
    const exporter = new InMemorySpanExporter();
    const tracing = await startTracing({ exporter: 'console', spanExporter: exporter });
    onTestFinished(() => tracing.shutdown());
    const faults: unknown[] = [];
    const weird = ORIGINS.map(([, error]) => error);
    let original: ExecutionResult | undefined;
    // Before the observers: hands them every origin at once. After them: puts the real result back,
    // so what the client gets shows only whether an observer broke the operation.
    const inject: Plugin = {
      onExecute: () => ({
        onExecuteDone({ result, setResult }) {
          original = result as ExecutionResult;
          setResult({ data: null, errors: weird as GraphQLError[] });
        },
      }),
    };
    const restore: Plugin = {
      onExecute: () => ({
        onExecuteDone({ setResult }) {
          if (original) setResult(original);
        },
      }),
    };
    const yoga = createYoga({
      schema,
      logging: false,
      plugins: [
        inject,
        useOperationObservers(
          [operationLogObserver(logger), metrics.observer(), tracingObserver(tracing)],
          (error) => faults.push(error),
        ),
        restore,
      ],
    });
    const answer = await run(yoga, 'query Hello { hello }');
    expect(answer).toEqual({ status: 200, body: { data: { hello: 'world' } } });
    expect(faults).toEqual([]);
    expect(lines.find((line) => line.msg === 'operation')).toMatchObject({
      operation: 'Hello',
      outcome: 'error',
      errorCodes: ['BAD_USER_INPUT', 'INTERNAL', 'RATE_LIMITED'],
    });
    expect(lines.filter((line) => line.msg === 'observer failed')).toEqual([]);
    const text = await metrics.render();
    expect(text).toMatch(/graphql_errors_total\{code="INTERNAL"\} 11/);
    expect(text).toMatch(/graphql_errors_total\{code="BAD_USER_INPUT"\} 1/);
    expect(exporter.getFinishedSpans()[0]?.attributes['graphql.error.codes']).toEqual([
      'BAD_USER_INPUT',
      'INTERNAL',
      'RATE_LIMITED',
    ]);
  });
});

describe('operation descriptions', () => {
  it('are shared for the names a document holds, made anew for a name it does not (no caller-grown cache)', () => {
    const seen: ObservedOperation[] = [];
    const observers = new OperationObservers([
      {
        name: 'record',
        start: (operation) => {
          seen.push(operation);
          return {};
        },
      },
    ]);
    const document = parse('query A { __typename } query B { __typename }');
    for (const requested of ['A', 'B', 'A', 'B', 'Nope', 'Nope']) observers.watchExecute(document, requested);
    const [a1, b1, a2, b2, nope1, nope2] = seen;
    expect(seen.map((operation) => operation.name)).toEqual(['A', 'B', 'A', 'B', 'Nope', 'Nope']);
    expect(a2).toBe(a1);
    expect(b2).toBe(b1);
    expect(a1).not.toBe(b1);
    expect(nope2).not.toBe(nope1);
    expect(nope1).toMatchObject({ name: 'Nope', type: 'execute', operationType: 'query' });
    // A single operation without a requested name is shared too.
    const single = parse('{ __typename }');
    observers.watchExecute(single, undefined);
    observers.watchExecute(single, null);
    expect(seen[7]).toBe(seen[6]);
  });
});

describe('a faulty observer', () => {
  /** An observer with a bug in every call it gets. */
  const broken: OperationObserver = {
    name: 'broken',
    start: () => ({
      run() {
        throw new Error('bug in run');
      },
      answered() {
        throw new Error('bug in answered');
      },
      streaming() {
        throw new Error('bug in streaming');
      },
      ended() {
        throw new Error('bug in ended');
      },
    }),
  };
  const failsToStart: OperationObserver = {
    name: 'failsToStart',
    start() {
      throw new Error('bug in start');
    },
  };

  it('is reported under its name; the operation and the other observers go on as if it were not there', async () => {
    const faults: Array<[string, string]> = [];
    const { logger, lines } = capturedLogger();
    const yoga = createYoga({
      schema,
      logging: false,
      plugins: [
        useOperationObservers([broken, failsToStart, operationLogObserver(logger)], (error, name) =>
          faults.push([name, String(error)]),
        ),
      ],
    });
    expect(await run(yoga, 'query Hello { hello }')).toEqual({
      status: 200,
      body: { data: { hello: 'world' } },
    });
    expect(faults).toEqual([
      ['failsToStart', 'Error: bug in start'],
      ['broken', 'Error: bug in run'],
      ['broken', 'Error: bug in answered'],
      ['broken', 'Error: bug in ended'],
    ]);
    expect(lines.filter((line) => line.msg === 'operation')).toEqual([
      expect.objectContaining({ operation: 'Hello', outcome: 'ok' }),
    ]);

    faults.length = 0;
    const response = await yoga.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription Ticks { ticks }' }),
    });
    const text = await response.text();
    flushEndedOperations();
    expect(text.match(/"ticks":\d/g)).toEqual(['"ticks":1', '"ticks":2', '"ticks":3']);
    expect(faults.map(([, error]) => error)).toEqual([
      'Error: bug in start',
      'Error: bug in run',
      'Error: bug in answered',
      'Error: bug in streaming',
      'Error: bug in ended',
    ]);
    expect(lines.filter((line) => line.msg === 'operation')).toHaveLength(2);
  });

  it('is found by its name however many observers there are (the first two watches are kept apart from the rest)', async () => {
    const calls: string[] = [];
    /** Records every call it gets, with its name. */
    const recorder = (name: string): OperationObserver => ({
      name,
      start: () => ({
        run(call) {
          calls.push(`${name}:run`);
          return call();
        },
        answered: () => calls.push(`${name}:answered`),
        streaming: () => calls.push(`${name}:streaming`),
        ended: () => calls.push(`${name}:ended`),
      }),
    });
    const faults: Array<[string, string]> = [];
    const yoga = createYoga({
      schema,
      logging: false,
      plugins: [
        useOperationObservers(
          [recorder('a'), recorder('b'), recorder('c'), broken, recorder('e')],
          (error, name) => faults.push([name, String(error)]),
        ),
      ],
    });
    const response = await yoga.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription Ticks { ticks }' }),
    });
    expect((await response.text()).match(/"ticks":\d/g)).toEqual(['"ticks":1', '"ticks":2', '"ticks":3']);
    flushEndedOperations();
    const each = (call: string) => ['a', 'b', 'c', 'e'].map((name) => `${name}:${call}`);
    expect(calls).toEqual([...each('run'), ...each('answered'), ...each('streaming'), ...each('ended')]);
    expect(faults).toEqual([
      ['broken', 'Error: bug in run'],
      ['broken', 'Error: bug in answered'],
      ['broken', 'Error: bug in streaming'],
      ['broken', 'Error: bug in ended'],
    ]);
  });

  it("an error the operation itself throws inside an observer's run is the operation's, not a fault", async () => {
    const faults: unknown[] = [];
    const passing: OperationObserver = { name: 'passing', start: () => ({ run: (call) => call() }) };
    const throwing = createSchema({
      typeDefs: 'type Query { hello: String }',
      resolvers: {
        Query: {
          hello: () => {
            throw new Error('resolver bug');
          },
        },
      },
    });
    const yoga = createYoga({
      schema: throwing,
      logging: false,
      plugins: [useOperationObservers([passing], (error) => faults.push(error))],
    });
    const answer = await run(yoga, '{ hello }');
    expect(answer.body.errors?.[0]?.message).toBe('Unexpected error.');
    expect(faults).toEqual([]);
  });

  it('a plugin hook that throws fails the operation (the premise: the guard is what holds)', async () => {
    const unguarded: Plugin = {
      onExecute: () => ({
        onExecuteDone() {
          throw new Error('bug in onExecuteDone');
        },
      }),
    };
    const yoga = createYoga({ schema, logging: false, plugins: [unguarded] });
    const answer = await run(yoga, '{ hello }');
    expect(answer.status).toBe(500);
  });
});

describe('subscription ends, seen once by the log and the gauge', () => {
  const streams = createSchema({
    typeDefs: 'type Query { hello: String } type Subscription { ticks(count: Int!, failAt: Int): Int }',
    resolvers: {
      Subscription: {
        ticks: {
          async *subscribe(_root: unknown, args: { count: number; failAt?: number | null }) {
            for (let tick = 1; tick <= args.count; tick++) {
              if (tick === args.failAt) throw new Error('the source failed');
              yield { ticks: tick };
              // Never-ending streams wait here until the client leaves.
              if (tick === args.count && args.count > 99) await new Promise(() => {});
            }
          },
        },
      },
    },
  });

  function observed() {
    const { logger, lines } = capturedLogger();
    const metrics = new GatewayMetrics({
      upstreamSockets: () => 0,
      circuitState: () => 'closed',
      upstreamLoad: () => ({ active: 0, queued: 0 }),
    });
    const faults: unknown[] = [];
    const yoga = createYoga({
      schema: streams,
      logging: false,
      plugins: [
        useOperationObservers([operationLogObserver(logger), metrics.observer()], (error) =>
          faults.push(error),
        ),
      ],
    });
    const open = async () => Number(/^graphql_subscriptions_open (\d+)$/m.exec(await metrics.render())?.[1]);
    const logged = () => lines.filter((line) => line.msg === 'operation');
    return { yoga, open, logged, faults, lines };
  }

  async function sse(yoga: ReturnType<typeof createYoga>, query: string, signal?: AbortSignal) {
    return yoga.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
      ...(signal ? { signal } : {}),
    });
  }

  it('completed', async () => {
    const { yoga, open, logged, faults } = observed();
    const text = await (await sse(yoga, 'subscription Done { ticks(count: 3) }')).text();
    expect(text.match(/"ticks":\d/g)).toHaveLength(3);
    expect(await open()).toBe(0);
    expect(logged()).toEqual([expect.objectContaining({ operation: 'Done', outcome: 'ok' })]);
    expect(faults).toEqual([]);
  });

  it('the source fails mid-stream (envelop onEnd never runs for that)', async () => {
    const { yoga, open, logged, lines } = observed();
    const text = await (await sse(yoga, 'subscription Fails { ticks(count: 5, failAt: 2) }')).text();
    expect(text).toContain('"ticks":1');
    expect(await open()).toBe(0);
    expect(logged()).toEqual([
      expect.objectContaining({ operation: 'Fails', outcome: 'error', errorCodes: ['INTERNAL'] }),
    ]);
    expect(lines.filter((line) => line.msg === 'observer failed')).toEqual([]);
  });

  it('the client leaves', async () => {
    const { yoga, open, logged } = observed();
    const abort = new AbortController();
    const response = await sse(yoga, 'subscription Forever { ticks(count: 100) }', abort.signal);
    const reader = response.body?.getReader();
    await reader?.read();
    expect(await open()).toBe(1);
    abort.abort();
    await reader?.cancel().catch(() => undefined);
    for (let tries = 0; tries < 100 && (await open()) !== 0; tries++)
      await new Promise((r) => setTimeout(r, 10));
    expect(await open()).toBe(0);
    expect(logged()).toEqual([expect.objectContaining({ operation: 'Forever' })]);
  });

  it('refused before streaming: counted and logged, never open', async () => {
    const { yoga, open, logged } = observed();
    await (await sse(yoga, 'subscription Bad { ticks(count: 1, failAt: 1) }')).text();
    const refuse: Plugin = {
      onSubscribe: ({ setResultAndStopExecution }) =>
        setResultAndStopExecution({
          errors: [new GraphQLError('no', { extensions: { code: 'RATE_LIMITED' } })],
        }),
    };
    const { logger, lines } = capturedLogger();
    const metrics = new GatewayMetrics({
      upstreamSockets: () => 0,
      circuitState: () => 'closed',
      upstreamLoad: () => ({ active: 0, queued: 0 }),
    });
    const refusing = createYoga({
      schema: streams,
      logging: false,
      plugins: [useOperationObservers([operationLogObserver(logger), metrics.observer()]), refuse],
    });
    await (await sse(refusing, 'subscription Refused { ticks(count: 1) }')).text();
    expect(/^graphql_subscriptions_open (\d+)$/m.exec(await metrics.render())?.[1]).toBe('0');
    expect(await metrics.render()).toMatch(/graphql_errors_total\{code="RATE_LIMITED"\} 1/);
    expect(lines.filter((line) => line.msg === 'operation')).toEqual([
      expect.objectContaining({ operation: 'Refused', outcome: 'error', errorCodes: ['RATE_LIMITED'] }),
    ]);
    expect(await open()).toBe(0);
    expect(logged()).toHaveLength(1);
  });
});
