/**
 * The parent side of the bench-only heap probe (heap-probe.mjs): node flags and env that load it into
 * a server process, and a request for the live heap (heap in use right after a full GC) and the young
 * generation's resident size as the request found it. With `samplesFile`, the probe also samples
 * allocations from its first answer on, and {@link liveAllocationSites} says where what is still live
 * at a later answer was allocated.
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bundleSourceOf } from './bundle-sources.ts';
import { ROOT } from './processes.ts';

let probes = 0;

/** One answer of the probe. */
export interface HeapSample {
  /** Heap in use after a full GC. */
  liveBytes: number;
  /** Resident size of V8's young generation when the probe was asked, before its GC. */
  youngBytes: number;
}

/**
 * A probe for one server process: pass `nodeFlags` and `env` to its spawn; `dispose` removes the file.
 * With `samplesFile`, each answer after the first writes the live allocation samples there.
 */
export function heapProbe(name: string, samplesFile?: string) {
  const file = join(os.tmpdir(), `bench-heap-${name}-${process.pid}-${Date.now()}-${probes++}`);
  let sequence = 0;
  /** Asks `pid` for a full GC (SIGUSR2) and waits for its answer. */
  const sample = async (pid: number): Promise<HeapSample> => {
    sequence++;
    process.kill(pid, 'SIGUSR2');
    for (let waited = 0; waited < 10_000; waited += 20) {
      await sleep(20);
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue; // not written yet
      }
      const [seen, live, young] = text.trim().split(' ').map(Number);
      if (seen === sequence && live !== undefined && young !== undefined)
        return { liveBytes: live, youngBytes: young };
    }
    throw new Error(`${name} did not answer the heap probe (is bench/lib/heap-probe.mjs loaded?)`);
  };
  return {
    nodeFlags: ['--expose-gc', '--import', join(ROOT, 'bench', 'lib', 'heap-probe.mjs')],
    env: { BENCH_HEAP_PROBE_FILE: file, ...(samplesFile ? { BENCH_HEAP_SAMPLES_FILE: samplesFile } : {}) },
    sample,
    /** The heap in use after a full GC in `pid`, in bytes. */
    async liveHeapBytes(pid: number): Promise<number> {
      return (await sample(pid)).liveBytes;
    },
    dispose() {
      rmSync(file, { force: true });
    },
  };
}

/** A node of V8's sampling heap profile: a call frame, the live bytes sampled in it, its callees. */
interface SampledFrame {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: SampledFrame[];
}

/** `url:line` as the source module and line it came from when `url` is an esbuild bundle (dist/*.js). */
function placeOf(url: string, line: number, column: number): string {
  const place = bundleSourceOf(url, line, column);
  return place
    ? `${place.module.replace(/^node_modules\//, '')}:${place.line}`
    : `${url.replace(/^.*\/node_modules\//, '')}:${line + 1}`;
}

/**
 * The allocation sites of what is live in a sampling heap profile (heap-probe.mjs), per `per`
 * (subscribers), largest first: `bytes  function  place  <- caller <- caller`. The first line is the
 * total. Sampled: a site below a few hundred bytes in all is noise.
 */
export function liveAllocationSites(samplesFile: string, per: number, top = 25): string[] {
  const profile = JSON.parse(readFileSync(samplesFile, 'utf8')) as { head: SampledFrame };
  const sites = new Map<string, number>();
  let total = 0;
  const name = (frame: SampledFrame) =>
    `${frame.callFrame.functionName || '(anonymous)'} ${placeOf(frame.callFrame.url, frame.callFrame.lineNumber, frame.callFrame.columnNumber)}`;
  const walk = (frame: SampledFrame, callers: SampledFrame[]) => {
    if (frame.selfSize > 0) {
      total += frame.selfSize;
      const stack = [frame, ...callers.slice(-3).reverse()].map(name).join('  <-  ');
      sites.set(stack, (sites.get(stack) ?? 0) + frame.selfSize);
    }
    for (const child of frame.children) walk(child, [...callers, frame]);
  };
  walk(profile.head, []);
  return [
    `${(total / per).toFixed(0).padStart(7)} B in all`,
    ...[...sites]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([stack, bytes]) => `${(bytes / per).toFixed(0).padStart(7)} B  ${stack}`),
  ];
}
