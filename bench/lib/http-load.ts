/**
 * HTTP load from the benchmark process: autocannon for throughput at saturation, and a sequential
 * one-connection loop with sub-millisecond timing for added latency (autocannon's histogram rounds
 * to whole milliseconds, too coarse for a 1 ms target).
 */
import autocannon from 'autocannon';
import { Client } from 'undici';
import type { BenchContext } from './context.ts';
import { cpuMs, endedChildrenCpuMs, treeCpuMs } from './processes.ts';
import { percentile, sorted } from './stats.ts';

/** One HTTP request shape, sent many times. */
export interface HttpTarget {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Throws when an answer is not what the scenario expects (checked before and after load). */
  check(status: number, body: string): void;
  /**
   * Cheap per-response check under load: false counts the answer as an error. GraphQL reports most
   * failures (rate limited, upstream down) with status 200 and an `errors` entry, which a status
   * count alone would take for success. @default status 2xx
   */
  isOk?(status: number, body: string): boolean;
}

function answeredOk(target: HttpTarget, status: number, body: string): boolean {
  return target.isOk ? target.isOk(status, body) : status >= 200 && status < 300;
}

/** Throughput and latency of one run. */
export interface LoadFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors, timeouts and non-2xx answers. */
  errors: number;
  requests: number;
}

/** Sends the target once and runs its check; the load figures mean nothing if this fails. */
export async function verify(target: HttpTarget): Promise<void> {
  const response = await fetch(target.url, {
    method: target.method,
    headers: target.headers,
    ...(target.body !== undefined ? { body: target.body } : {}),
  });
  target.check(response.status, await response.text());
}

/** Runs autocannon with `connections` keep-alive connections for `seconds`. */
export async function saturate(
  target: HttpTarget,
  connections: number,
  seconds: number,
): Promise<LoadFigures> {
  let failed = 0;
  const result = await autocannon({
    url: target.url,
    requests: [
      {
        method: target.method,
        headers: target.headers,
        ...(target.body !== undefined ? { body: target.body } : {}),
        onResponse: (status, body) => {
          if (!answeredOk(target, status, body)) failed++;
        },
      },
    ],
    connections,
    duration: seconds,
    pipelining: 1,
    timeout: 10,
  });
  // Only answers that passed the check count as throughput.
  const good = result.requests.total - failed;
  return {
    requestsPerSecond: good / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts + failed,
    requests: result.requests.total,
  };
}

/**
 * One connection, one request at a time, for `seconds`: the latency a lone client sees.
 * Timing uses performance.now() around each request, so figures have microsecond resolution.
 */
export async function sequential(target: HttpTarget, seconds: number): Promise<LoadFigures> {
  const url = new URL(target.url);
  const client = new Client(url.origin, { pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  try {
    // Warm the connection so the first handshake is not a latency sample.
    await sendOnce(client, url, target);
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      const started = performance.now();
      const ok = await sendOnce(client, url, target).catch(() => false);
      latencies.push(performance.now() - started);
      if (!ok) errors++;
    }
  } finally {
    await client.close();
  }
  const s = sorted(latencies);
  return {
    requestsPerSecond: latencies.length / seconds,
    p50Ms: percentile(s, 50),
    p99Ms: percentile(s, 99),
    errors,
    requests: latencies.length,
  };
}

/** One request; answers whether it passed the target's cheap check. */
async function sendOnce(client: Client, url: URL, target: HttpTarget): Promise<boolean> {
  const response = await client.request({
    path: url.pathname + url.search,
    method: target.method,
    headers: target.headers,
    ...(target.body !== undefined ? { body: target.body } : {}),
  });
  return answeredOk(target, response.statusCode, await response.body.text());
}

/** Load figures plus the CPU time each server process spent per request during the run. */
export interface LoadWithCpu extends LoadFigures {
  /**
   * CPU (user + system, /proc) per request of the process between client and service: the gateway
   * (with its workers), or the floor on a floor run; the gateway is idle during direct runs.
   */
  gatewayCpuMsPerRequest: number;
  /** Local service CPU per request. */
  serviceCpuMsPerRequest: number;
  /**
   * CPU per request of the git commands the local service ran and waited for during the run (its
   * workspace routes; a new conversation's repository), which {@link serviceCpuMsPerRequest} leaves out.
   */
  serviceGitCpuMsPerRequest: number;
}

/**
 * Runs `load` and adds CPU time per request of both server processes. Unlike throughput on a
 * shared 2-core machine, CPU per request hardly moves with what else is running, so it is the figure
 * to compare across runs (10 ms clock ticks, so it needs a few thousand requests to be precise).
 */
export async function withCpu(
  context: BenchContext,
  load: () => Promise<LoadFigures>,
  middlePid: number = context.gatewayPid,
): Promise<LoadWithCpu> {
  const gatewayBefore = treeCpuMs(middlePid);
  const serviceBefore = cpuMs(context.servicePid);
  const gitBefore = endedChildrenCpuMs(context.servicePid);
  const figures = await load();
  const requests = Math.max(1, figures.requests);
  return {
    ...figures,
    gatewayCpuMsPerRequest: (treeCpuMs(middlePid) - gatewayBefore) / requests,
    serviceCpuMsPerRequest: (cpuMs(context.servicePid) - serviceBefore) / requests,
    serviceGitCpuMsPerRequest: (endedChildrenCpuMs(context.servicePid) - gitBefore) / requests,
  };
}
