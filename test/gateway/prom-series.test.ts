/**
 * The metrics' series (src/gateway/observability/prom-series.ts) add to prom-client's own records
 * instead of going through prom-client on every call: `/metrics` must print exactly what prom-client's
 * `labels().inc()` / `.observe()` print for the same calls, through resets and for values on, between
 * and above the bucket bounds.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CounterSeries, HistogramSeries } from '../../src/gateway/observability/prom-series.ts';

const BUCKETS = [0.001, 0.01, 0.1, 1];

/** A counter and a histogram in a registry of their own. */
function metrics() {
  const registry = new Registry();
  const counter = new Counter({
    name: 'things_total',
    help: 'Things.',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });
  const histogram = new Histogram({
    name: 'thing_seconds',
    help: 'Thing durations.',
    labelNames: ['kind'],
    buckets: BUCKETS,
    registers: [registry],
  });
  return { registry, counter, histogram };
}

/** The same calls on both: prom-client's children (expected) and the series (actual). */
function pair() {
  const expected = metrics();
  const actual = metrics();
  const series = {
    okA: new CounterSeries(actual.counter, { kind: 'a', outcome: 'ok' }),
    errorA: new CounterSeries(actual.counter, { kind: 'a', outcome: 'error' }),
    okB: new CounterSeries(actual.counter, { kind: 'b', outcome: 'ok' }),
    durationA: new HistogramSeries(actual.histogram, { kind: 'a' }, BUCKETS),
    // A second series object on the same labels (as the upstream attempts bind one per status).
    durationAToo: new HistogramSeries(actual.histogram, { kind: 'a' }, BUCKETS),
    durationB: new HistogramSeries(actual.histogram, { kind: 'b' }, BUCKETS),
  };
  const children = {
    okA: expected.counter.labels({ kind: 'a', outcome: 'ok' }),
    errorA: expected.counter.labels({ kind: 'a', outcome: 'error' }),
    okB: expected.counter.labels({ kind: 'b', outcome: 'ok' }),
    durationA: expected.histogram.labels({ kind: 'a' }),
    durationAToo: expected.histogram.labels({ kind: 'a' }),
    durationB: expected.histogram.labels({ kind: 'b' }),
  };
  return {
    inc(name: 'okA' | 'errorA' | 'okB') {
      series[name].inc();
      children[name].inc();
    },
    observe(name: 'durationA' | 'durationAToo' | 'durationB', value: number) {
      series[name].observe(value);
      children[name].observe(value);
    },
    reset() {
      expected.registry.resetMetrics();
      actual.registry.resetMetrics();
    },
    texts: async () => ({
      actual: await actual.registry.metrics(),
      expected: await expected.registry.metrics(),
    }),
  };
}

describe('prom-client series', () => {
  it('print what prom-client prints for the same calls', async () => {
    const both = pair();
    // Below, on, between and above the bounds; the first call of each series creates its record.
    for (const value of [0.0005, 0.001, 0.004, 0.01, 0.05, 0.1, 0.7, 1, 3, 12, 0]) {
      both.observe('durationA', value);
      both.observe('durationB', value * 2);
    }
    both.observe('durationAToo', 0.02);
    for (let n = 0; n < 7; n++) both.inc('okA');
    both.inc('okB');
    const { actual, expected } = await both.texts();
    expect(actual).toBe(expected);
    // The premise: the series were counted (a series never touched prints nothing, as a child).
    expect(actual).toContain('things_total{kind="a",outcome="ok"} 7');
    expect(actual).not.toContain('outcome="error"');
    expect(actual).toContain('thing_seconds_count{kind="a"} 12');
  });

  it('go through prom-client only on the first call of a series, then add to its record directly', () => {
    const { counter, histogram } = metrics();
    const counted = new CounterSeries(counter, { kind: 'a', outcome: 'ok' });
    const timed = new HistogramSeries(histogram, { kind: 'a' }, BUCKETS);
    let calls = 0;
    const viaCounter = counter.inc.bind(counter);
    const viaHistogram = histogram.observe.bind(histogram);
    counter.inc = ((...args: Parameters<typeof viaCounter>) => {
      calls++;
      viaCounter(...args);
    }) as typeof counter.inc;
    histogram.observe = ((...args: Parameters<typeof viaHistogram>) => {
      calls++;
      viaHistogram(...args);
    }) as typeof histogram.observe;
    for (let n = 0; n < 5; n++) {
      counted.inc();
      timed.observe(0.05);
    }
    expect(calls).toBe(2);
  });

  it('count again from zero after a reset, as prom-client does', async () => {
    const both = pair();
    both.inc('okA');
    both.observe('durationA', 0.05);
    both.reset();
    both.inc('errorA');
    both.inc('errorA');
    both.observe('durationA', 0.5);
    const { actual, expected } = await both.texts();
    expect(actual).toBe(expected);
    expect(actual).not.toContain('outcome="ok"');
    expect(actual).toContain('things_total{kind="a",outcome="error"} 2');
    expect(actual).toContain('thing_seconds_count{kind="a"} 1');
  });

  it('refuse a value that is not finite, as prom-client does', () => {
    const { histogram } = metrics();
    const series = new HistogramSeries(histogram, { kind: 'a' }, BUCKETS);
    series.observe(0.5);
    expect(() => series.observe(Number.NaN)).toThrow(TypeError);
  });
});
