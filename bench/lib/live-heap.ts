/**
 * The parent side of the bench-only heap probe (heap-probe.mjs): node flags and env that load it into
 * a server process, and a request for the live heap (heap in use right after a full GC) and the young
 * generation's resident size as the request found it.
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './processes.ts';

let probes = 0;

/** One answer of the probe. */
export interface HeapSample {
  /** Heap in use after a full GC. */
  liveBytes: number;
  /** Resident size of V8's young generation when the probe was asked, before its GC. */
  youngBytes: number;
}

/** A probe for one server process: pass `nodeFlags` and `env` to its spawn; `dispose` removes the file. */
export function heapProbe(name: string) {
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
    env: { BENCH_HEAP_PROBE_FILE: file },
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
