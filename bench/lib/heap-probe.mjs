/**
 * Bench-only preload for the soak's gateway (`node --expose-gc --import bench/lib/heap-probe.mjs`):
 * on SIGUSR2 it runs a full garbage collection and writes `<sequence> <heapUsedBytes> <youngBytes>` to
 * the file named by BENCH_HEAP_PROBE_FILE. Why: heap in use sampled at random moments is a saw-tooth
 * (garbage piles up until V8 decides to collect, and V8 lets the heap grow further as it warms up), so
 * two samples a minute apart can differ by tens of MiB without any leak. The heap right after a full GC
 * is the live data; only that rising says "leak". `youngBytes` is the young generation's resident size
 * as the signal found it (before the collection): V8 sizes it from the allocation and survival it has
 * seen (up to 2 x 16 MiB), not from what is live, so it explains much of an RSS difference between two
 * moments (bench/scenarios/fanout.ts reports it beside RSS).

With BENCH_HEAP_SAMPLES_FILE set, the first answer also starts V8's sampling heap profiler and each
later one writes its profile there (after the collection, so only what is still live): the allocation
stack of the objects allocated since the first answer and still held, which is what a subscriber holds
(fanout.ts prints it by allocating function). Sampling, not a heap snapshot: on Node 20 writing a
snapshot of the gateway's heap did not finish within minutes. Never loaded by `npm start`.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.BENCH_HEAP_PROBE_FILE;
const samplesFile = process.env.BENCH_HEAP_SAMPLES_FILE;
/** One allocation sample per this many bytes on average (V8's default is 32 KiB: too coarse here). */
const SAMPLING_INTERVAL_BYTES = 512;
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
    const heapUsed = process.memoryUsage().heapUsed;
    if (samplesFile) sampleLiveAllocations();
    writeFileSync(file, `${sequence} ${heapUsed} ${young}\n`);
  });
}

let session = null;

/** First call: starts sampling. Later calls: writes the live samples so far to BENCH_HEAP_SAMPLES_FILE. */
function sampleLiveAllocations() {
  if (session === null) {
    session = new Session();
    session.connect();
    session.post('HeapProfiler.enable');
    session.post('HeapProfiler.startSampling', { samplingInterval: SAMPLING_INTERVAL_BYTES });
    return;
  }
  // The inspector answers an in-process session synchronously.
  session.post('HeapProfiler.getSamplingProfile', (error, answer) => {
    if (!error) writeFileSync(samplesFile, JSON.stringify(answer.profile));
  });
}
