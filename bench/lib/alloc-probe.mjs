/**
 * Bench-only preload (`node --import bench/lib/alloc-probe.mjs`, bench/ab.ts --alloc-prof): on the first
 * SIGUSR2 it starts V8's sampling heap profiler, keeping the samples of objects the garbage collector
 * has since freed; on the second it writes the profile to BENCH_ALLOC_PROFILE_FILE and stops. So the
 * profile holds what was allocated between the two signals, live or not: allocation per request, which
 * unlike CPU time hardly moves with what else the machine is doing (summarize it with
 * bench/profile-summary.ts <file> --requests <n>). Never loaded by `npm start`.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const file = process.env.BENCH_ALLOC_PROFILE_FILE;
/** One sample per this many bytes on average (V8's default, 32 KiB, is too coarse for one request). */
const SAMPLING_INTERVAL_BYTES = 4096;

if (file) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.startSampling', {
        samplingInterval: SAMPLING_INTERVAL_BYTES,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      return;
    }
    sampling = false;
    // The inspector answers an in-process session synchronously.
    session.post('HeapProfiler.getSamplingProfile', (error, answer) => {
      if (!error) writeFileSync(file, JSON.stringify(answer.profile));
    });
    session.post('HeapProfiler.stopSampling');
  });
}
