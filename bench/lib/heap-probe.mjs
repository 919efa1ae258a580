/**
 * Bench-only preload for the soak's gateway (`node --expose-gc --import bench/lib/heap-probe.mjs`):
 * on SIGUSR2 it runs a full garbage collection and writes `<sequence> <heapUsedBytes>` to the file
 * named by BENCH_HEAP_PROBE_FILE. Why: heap in use sampled at random moments is a saw-tooth (garbage
 * piles up until V8 decides to collect, and V8 lets the heap grow further as it warms up), so two
 * samples a minute apart can differ by tens of MiB without any leak. The heap right after a full GC
 * is the live data; only that rising says "leak". Never loaded by `npm start`.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_HEAP_PROBE_FILE;
const collect = globalThis.gc;
let sequence = 0;

if (file && typeof collect === 'function') {
  process.on('SIGUSR2', () => {
    // Twice: the first pass can leave objects whose finalizers/weak callbacks free more on the second.
    collect();
    collect();
    sequence += 1;
    writeFileSync(file, `${sequence} ${process.memoryUsage().heapUsed}\n`);
  });
}
