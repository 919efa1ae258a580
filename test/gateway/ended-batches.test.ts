/**
 * Observers are told of operations' ends in batches (operation-observer.ts, EndedOperations): not
 * during the operation's own work, but within ENDED_BATCH_MS, a full batch at once, or whenever
 * someone needs them now (the metrics' scrape, the log's flush), each with the time it ended; the
 * upstream attempts' metrics too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'graphql';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createLogger, flushLogs, operationLogObserver } from '../../src/gateway/observability/logging.ts';
import { GatewayMetrics } from '../../src/gateway/observability/metrics.ts';
import {
  ENDED_BATCH_MS,
  flushEndedOperations,
  type OperationObserver,
  OperationObservers,
  tellEndedLater,
} from '../../src/gateway/observability/operation-observer.ts';

const document = parse('query Hello { hello }');

/** An observer recording each end it is told: the operation's number and when it ended. */
function recorder() {
  const told: Array<{ operation: number; endedAt: number }> = [];
  let started = 0;
  const observer: OperationObserver = {
    name: 'recorder',
    start: () => {
      const operation = ++started;
      return { ended: (_errors, endedAt) => told.push({ operation, endedAt }) };
    },
  };
  return { observer, told };
}

/** Metrics of a gateway with no sockets, a closed circuit and nothing in flight. */
const idleGatewayMetrics = () =>
  new GatewayMetrics({
    upstreamSockets: () => 0,
    circuitState: () => 'closed',
    upstreamLoad: () => ({ active: 0, queued: 0 }),
  });

describe('the ends of operations', () => {
  it('are told after the operation, in the order they ended, within the batch time, with when each ended', async () => {
    flushEndedOperations();
    const { observer, told } = recorder();
    const observers = new OperationObservers([observer]);
    const ends: Array<[number, number]> = [];
    for (let index = 0; index < 3; index++) {
      const watches = observers.watchExecute(document, 'Hello');
      const before = performance.now();
      watches.ended([]);
      ends.push([before, performance.now()]);
      // Once per operation, whatever reports the end again.
      watches.ended([]);
    }
    expect(told).toEqual([]);
    // Nor at the end of this turn of the event loop (setImmediate runs before the next turn's timers):
    // by the batch's timer.
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).toEqual([]);

    const waitedFrom = performance.now();
    while (told.length === 0 && performance.now() - waitedFrom < 2_000) await sleep(5);
    expect(told.map((end) => end.operation)).toEqual([1, 2, 3]);
    told.forEach(({ endedAt }, index) => {
      const [before, after] = ends[index] as [number, number];
      expect(endedAt).toBeGreaterThanOrEqual(before);
      expect(endedAt).toBeLessThanOrEqual(after);
    });
  });

  it('are told at once when a batch is full', () => {
    flushEndedOperations();
    const { observer, told } = recorder();
    const observers = new OperationObservers([observer]);
    for (let index = 0; index < 255; index++) observers.watchExecute(document, 'Hello').ended([]);
    expect(told).toHaveLength(0);
    observers.watchExecute(document, 'Hello').ended([]);
    expect(told).toHaveLength(256);
  });

  it('are all told when one of them throws, which is reported and ends nothing else', () => {
    flushEndedOperations();
    const reported = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => reported.mockRestore());
    const told: string[] = [];
    tellEndedLater(
      {
        tellEnded() {
          throw new Error('bug in an end');
        },
      },
      null,
      performance.now(),
    );
    tellEndedLater({ tellEnded: (detail: string) => told.push(detail) }, 'after it', performance.now());
    flushEndedOperations();
    expect(told).toEqual(['after it']);
    expect(reported).toHaveBeenCalledTimes(1);
    expect(String(reported.mock.calls[0]?.[1])).toContain('bug in an end');
  });

  it('are counted in a scrape of the metrics taken right after them', async () => {
    flushEndedOperations();
    const metrics = idleGatewayMetrics();
    const observers = new OperationObservers([metrics.observer()]);
    const watches = observers.watchExecute(document, 'Hello');
    watches.answered([]);
    watches.ended([]);
    expect(await metrics.render()).toMatch(
      /graphql_operations_total\{operation="Hello",type="execute",outcome="ok"\} 1/,
    );
  });

  it('of upstream attempts are counted in the scrape after them, each with its own duration', async () => {
    flushEndedOperations();
    const metrics = idleGatewayMetrics();
    const startedBefore = performance.now();
    const end = metrics.onAttempt({ method: 'GET', path: '/api/conversations?limit=20', attempt: 1 });
    const startedAfter = performance.now();
    await sleep(20);
    const endedBefore = performance.now();
    end({ status: 200 });
    const endedAfter = performance.now();
    // Long enough after the end that a duration read when the batch is told would show it.
    await sleep(ENDED_BATCH_MS + 40);
    const text = await metrics.render();
    expect(text).toMatch(
      /upstream_requests_total\{method="GET",route="\/api\/conversations",status="200"\} 1\n/,
    );
    const sum = Number(
      /upstream_request_duration_seconds_sum\{method="GET",route="\/api\/conversations"\} ([\d.e-]+)/.exec(
        text,
      )?.[1],
    );
    expect(sum * 1000).toBeGreaterThanOrEqual(endedBefore - startedAfter - 0.01);
    expect(sum * 1000).toBeLessThanOrEqual(endedAfter - startedBefore + 0.01);
  });

  it('have their log lines among those flushed', async () => {
    flushEndedOperations();
    const lines: string[] = [];
    const destination = {
      write(line: string) {
        lines.push(line);
        return true;
      },
    };
    const logger = createLogger({ destination: destination as never });
    const observers = new OperationObservers([operationLogObserver(logger)]);
    observers.watchExecute(document, 'Hello').ended([]);
    expect(lines).toEqual([]);
    await flushLogs(logger);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ operation: 'Hello', outcome: 'ok', msg: 'operation' }),
    ]);
  });
});
