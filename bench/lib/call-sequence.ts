/**
 * A client operation made of several HTTP calls sent one after the other: what a direct client does
 * for an answer the gateway gives in one request (the workspace scenario: the conversation record, the
 * changed files, one file's diff). Measured as {@link HttpTarget}s are (http-load.ts), with the
 * operation as the unit: at one connection per origin for latency, with `connections` operations in
 * flight at saturation, each operation timed with microsecond resolution.
 *
 * undici drives it rather than autocannon, which counts each call as a request and knows no
 * operations; a comparison drives both of its sides with this same client (the gateway's side is an
 * operation of one call), so neither side's figures carry the other client's costs.
 */
import { Agent } from 'undici';
import type { HttpTarget, LoadFigures } from './http-load.ts';
import { percentile, sorted } from './stats.ts';

/** The calls of one operation, in order; each is checked as its target says. */
export interface CallSequence {
  calls: readonly HttpTarget[];
}

/** Whether a side's workload is an operation of several calls rather than one request. */
export function isCallSequence(workload: HttpTarget | CallSequence): workload is CallSequence {
  return 'calls' in workload;
}

/** A call split the way undici's dispatcher takes it. */
interface PreparedCall {
  target: HttpTarget;
  origin: string;
  path: string;
}

function prepare(sequence: CallSequence): PreparedCall[] {
  return sequence.calls.map((target) => {
    const url = new URL(target.url);
    return { target, origin: url.origin, path: url.pathname + url.search };
  });
}

/** Sends every call once and runs its check; the load figures mean nothing if this fails. */
export async function verifySequence(sequence: CallSequence): Promise<void> {
  for (const target of sequence.calls) {
    const response = await fetch(target.url, {
      method: target.method,
      headers: target.headers,
      ...(target.body !== undefined ? { body: target.body } : {}),
    });
    target.check(response.status, await response.text());
  }
}

/** One operation: every call in order; false when any answer fails its cheap check or a call fails. */
async function runOnce(agent: Agent, calls: readonly PreparedCall[]): Promise<boolean> {
  let ok = true;
  for (const { target, origin, path } of calls) {
    const response = await agent.request({
      origin,
      path,
      method: target.method,
      headers: target.headers,
      ...(target.body !== undefined ? { body: target.body } : {}),
    });
    const body = await response.body.text();
    const status = response.statusCode;
    if (!(target.isOk ? target.isOk(status, body) : status >= 200 && status < 300)) ok = false;
  }
  return ok;
}

/**
 * `workers` loops sending the operation until `seconds` have passed, over keep-alive connections,
 * `workers` per origin at most (a worker holds one per origin, as its calls go one after the other).
 */
async function loop(sequence: CallSequence, workers: number, seconds: number): Promise<LoadFigures> {
  const calls = prepare(sequence);
  // As autocannon's `timeout: 10` in saturate(): a stuck answer counts as an error, not a hang.
  const agent = new Agent({
    connections: workers,
    pipelining: 1,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const latencies: number[] = [];
  let errors = 0;
  try {
    // Warm one connection per origin so the first handshakes are not latency samples.
    await runOnce(agent, calls);
    const started = performance.now();
    const until = started + seconds * 1000;
    const worker = async () => {
      while (performance.now() < until) {
        const began = performance.now();
        const ok = await runOnce(agent, calls).catch(() => false);
        latencies.push(performance.now() - began);
        if (!ok) errors++;
      }
    };
    await Promise.all(Array.from({ length: workers }, worker));
    const elapsed = (performance.now() - started) / 1000;
    const s = sorted(latencies);
    return {
      // Only operations whose every answer passed the check count as throughput.
      requestsPerSecond: (latencies.length - errors) / elapsed,
      p50Ms: percentile(s, 50),
      p99Ms: percentile(s, 99),
      errors,
      requests: latencies.length,
    };
  } finally {
    await agent.close();
  }
}

/** One operation at a time for `seconds` (one connection per origin): the latency a lone client sees. */
export function sequentialSequence(sequence: CallSequence, seconds: number): Promise<LoadFigures> {
  return loop(sequence, 1, seconds);
}

/** `connections` operations in flight for `seconds`: throughput and latency at saturation. */
export function saturateSequence(
  sequence: CallSequence,
  connections: number,
  seconds: number,
): Promise<LoadFigures> {
  return loop(sequence, connections, seconds);
}
