/**
 * Soak: a bounded load run through a gateway of its own (lists, lookups by id and node, a create now
 * and then) in consecutive windows, reading the gateway's /metrics after each window (resident memory,
 * heap in use as sampled, operations and error codes) and the live heap after a forced full GC
 * (bench/lib/heap-probe.mjs). Shows whether memory stays flat and nothing fails under sustained load;
 * prints figures, never fails a build.
 */
import { type BenchContext, CONVERSATION_FIELDS, graphqlTarget } from '../lib/context.ts';
import { type HttpTarget, saturate, verify } from '../lib/http-load.ts';
import { heapProbe } from '../lib/live-heap.ts';
import { spawnGateway } from '../lib/processes.ts';
import { fmt, type ScenarioResult } from '../lib/report.ts';
import { round } from '../lib/stats.ts';

/** One sample of the gateway's metrics after a window. */
interface Sample {
  window: number;
  requestsPerSecond: number;
  loadErrors: number;
  rssMiB: number;
  /** Heap in use at the scrape: includes garbage not collected yet (a saw-tooth). */
  heapUsedMiB: number;
  /** Heap in use right after a forced full GC: the live data. */
  liveHeapMiB: number;
  operations: number;
  /** Errors in answers, by code, except REQUEST_CANCELLED (see below). */
  errorResults: number;
  /**
   * REQUEST_CANCELLED: autocannon hangs up on the requests in flight when a window ends; the gateway
   * then correctly cancels their upstream calls. Counted apart: a client leaving is not a failure.
   */
  cancelledAtWindowEnd: number;
}

/** Reads `name{...} value` lines of a Prometheus text exposition and sums them. */
function metricSum(text: string, name: string, filter: (labels: string) => boolean = () => true): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(\{[^}]*\})?\s+([-0-9.e+]+)$/.exec(line);
    if (!match || match[1] !== name || !filter(match[2] ?? '')) continue;
    total += Number(match[3]);
  }
  return total;
}

function targets(context: BenchContext): HttpTarget[] {
  const ids = context.conversationIds;
  const list = graphqlTarget(
    context,
    `query SoakList { conversations(first: 20) { edges { node { ${CONVERSATION_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
    {},
    () => {},
  );
  const lookups = graphqlTarget(
    context,
    `query SoakLookups($a: ID!, $b: ID!, $c: ID!) {
      a: conversation(id: $a) { id title status } b: conversation(id: $b) { id title status }
      c: conversation(id: $c) { id title status }
    }`,
    { a: ids[0], b: ids[1], c: ids[2] },
    (data) => {
      if (!data.a || !data.b || !data.c) throw new Error('lookup returned null');
    },
  );
  const create = graphqlTarget(
    context,
    `mutation SoakCreate { createConversation(input: {}) { __typename ... on CreateConversationPayload { conversationId } } }`,
    {},
    (data) => {
      const result = data.createConversation as { __typename?: string };
      if (result.__typename !== 'CreateConversationPayload')
        throw new Error(`create answered ${result.__typename}`);
    },
  );
  return [list, lookups, list, lookups, create];
}

/** Runs the soak scenario: `windows` windows of `seconds` each at `connections` connections. */
export async function runSoak(context: BenchContext): Promise<ScenarioResult> {
  // A gateway of its own: fresh (the verdict does not depend on which scenarios ran before) and with
  // the bench-only heap probe, which needs --expose-gc.
  const probe = heapProbe('soak-gateway');
  const gateway = await spawnGateway(context.serviceUrl, {
    nodeFlags: [...context.gatewayNodeFlags, ...probe.nodeFlags],
    env: probe.env,
  });
  try {
    const liveHeapMiB = async () => round((await probe.liveHeapBytes(gateway.pid)) / 2 ** 20);
    return await soak({ ...context, gatewayUrl: gateway.url, gatewayPid: gateway.pid }, liveHeapMiB);
  } finally {
    await gateway.stop();
    probe.dispose();
  }
}

async function soak(context: BenchContext, liveHeapMiB: () => Promise<number>): Promise<ScenarioResult> {
  const windows = context.quick ? 6 : 12;
  const seconds = context.quick ? 3 : 5;
  const connections = 8;
  const metricsUrl = new URL('/metrics', context.gatewayUrl).toString();
  const mix = targets(context);
  for (const target of new Set(mix)) await verify(target);

  const scrape = async () => (await fetch(metricsUrl)).text();
  const samples: Sample[] = [];
  for (let window = 0; window < windows; window++) {
    const target = mix[window % mix.length] as HttpTarget;
    const figures = await saturate(target, connections, seconds);
    const text = await scrape();
    samples.push({
      window,
      requestsPerSecond: round(figures.requestsPerSecond),
      loadErrors: figures.errors,
      rssMiB: round(metricSum(text, 'process_resident_memory_bytes') / 2 ** 20),
      heapUsedMiB: round(metricSum(text, 'nodejs_heap_size_used_bytes') / 2 ** 20),
      liveHeapMiB: await liveHeapMiB(),
      operations: metricSum(text, 'graphql_operations_total'),
      errorResults: metricSum(
        text,
        'graphql_errors_total',
        (labels) => !labels.includes('REQUEST_CANCELLED'),
      ),
      cancelledAtWindowEnd: metricSum(text, 'graphql_errors_total', (labels) =>
        labels.includes('REQUEST_CANCELLED'),
      ),
    });
  }
  // Answers still right after the run: a degraded gateway must not look healthy.
  for (const target of new Set(mix)) await verify(target);
  const final = await scrape();

  // Heap in use as sampled is a saw-tooth (it climbs until a major GC, and V8 lets it climb higher as
  // the process warms up), so its floors say little: a full bench run once showed +54.7 MiB between the
  // thirds' floors while the live heap after a full GC was flat (CHANGELOG.md). The verdict is
  // on the live heap: the lowest after-GC figure of the last third against the first third's. RSS and
  // the sampled heap are reported the same way, for information. The first window is warm-up (jit
  // compilation, parse/validate caches, metric children, pools) and stays out of the comparison.
  const third = Math.max(1, Math.floor((samples.length - 1) / 3));
  const floor = (values: number[]) => Math.min(...values);
  const early = samples.slice(1, 1 + third);
  const late = samples.slice(-third);
  const growth = (pick: (s: Sample) => number) => round(floor(late.map(pick)) - floor(early.map(pick)));
  const rssGrowth = growth((s) => s.rssMiB);
  const sampledHeapGrowth = growth((s) => s.heapUsedMiB);
  const liveHeapGrowth = growth((s) => s.liveHeapMiB);
  const signed = (value: number) => `${value >= 0 ? '+' : ''}${fmt(value)}`;
  const loadErrors = samples.reduce((sum, s) => sum + s.loadErrors, 0);
  const errorResults = samples.at(-1)?.errorResults ?? 0;
  const cancelled = samples.at(-1)?.cancelledAtWindowEnd ?? 0;
  const operations = samples.at(-1)?.operations ?? 0;
  const openSubscriptions = metricSum(final, 'graphql_subscriptions_open');
  const flat = liveHeapGrowth < 20; // a lower floor later is no leak
  return {
    name: 'soak',
    rows: [
      {
        scenario: 'soak',
        measure: `${windows}x${seconds} s @${connections} conns`,
        gateway: `${fmt(operations)} ops`,
        direct: '',
        derived: `${loadErrors} load errors, ${errorResults} error results (+${cancelled} cut at window ends)`,
        target: { goal: 'no errors', met: loadErrors === 0 && errorResults === 0 },
      },
      {
        scenario: 'soak',
        measure: 'RSS first/last window (floor Δ)',
        gateway: `${fmt(samples[0]?.rssMiB ?? Number.NaN)}/${fmt(samples.at(-1)?.rssMiB ?? Number.NaN)} MiB`,
        direct: '',
        derived: `last-first third floor ${signed(rssGrowth)} MiB`,
      },
      {
        scenario: 'soak',
        measure: 'sampled heap first/last (floor Δ)',
        gateway: `${fmt(samples[0]?.heapUsedMiB ?? Number.NaN)}/${fmt(samples.at(-1)?.heapUsedMiB ?? Number.NaN)} MiB`,
        direct: '',
        derived: `last-first third floor ${signed(sampledHeapGrowth)} MiB (saw-tooth, no verdict)`,
      },
      {
        scenario: 'soak',
        measure: 'live heap first/last (floor Δ)',
        gateway: `${fmt(samples[0]?.liveHeapMiB ?? Number.NaN)}/${fmt(samples.at(-1)?.liveHeapMiB ?? Number.NaN)} MiB`,
        direct: '',
        derived: `after a full GC; last-first third floor ${signed(liveHeapGrowth)} MiB`,
        target: { goal: 'live heap growth < 20 MiB', met: flat },
      },
    ],
    details: {
      samples,
      rssGrowthMiB: rssGrowth,
      sampledHeapGrowthMiB: sampledHeapGrowth,
      liveHeapGrowthMiB: liveHeapGrowth,
      openSubscriptionsAfter: openSubscriptions,
    },
  };
}
