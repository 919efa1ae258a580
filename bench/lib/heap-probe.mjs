/**
 * Bench-only preload for the soak's gateway (`node --expose-gc --import bench/lib/heap-probe.mjs`):
 * on SIGUSR2 it runs a full garbage collection and writes `<sequence> <heapUsedBytes> <youngBytes>` to
 * the file named by BENCH_HEAP_PROBE_FILE. Why: heap in use sampled at random moments is a saw-tooth
 * (garbage piles up until V8 decides to collect, and V8 lets the heap grow further as it warms up), so
 * two samples a minute apart can differ by tens of MiB without any leak. The heap right after a full GC
 * is the live data; only that rising says "leak". `youngBytes` is the young generation's resident size
 * as the signal found it (before the collection): V8 sizes it from the allocation and survival it has
 * seen (up to 2 x 16 MiB), not from what is live, so it explains much of an RSS difference between two
 * moments (bench/scenarios/fanout.ts reports it beside RSS). Never loaded by `npm start`.
 */
import { writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.BENCH_HEAP_PROBE_FILE;
const collect = globalThis.gc;
let sequence = 0;

/** Resident bytes of the young generation (its semi-spaces and its large objects). */
function youngBytes() {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space' || space.space_name === 'new_large_object_space')
      bytes += space.physical_space_size;
  }
  return bytes;
}

if (file && typeof collect === 'function') {
  process.on('SIGUSR2', () => {
    const young = youngBytes();
    // Twice: the first pass can leave objects whose finalizers/weak callbacks free more on the second.
    collect();
    collect();
    sequence += 1;
    writeFileSync(file, `${sequence} ${process.memoryUsage().heapUsed} ${young}\n`);
  });
}
