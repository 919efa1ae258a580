import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect, onTestFinished, vi } from 'vitest';

/**
 * Runs a TypeScript entry (`src/index.ts`, a fixture) in node itself with tsx's loader. Not the `tsx`
 * CLI: it runs the program in a child process of its own, so a signal to the spawned pid (SIGTERM of a
 * drain test, kill -9 of a replica, the kill after a test) would reach only the wrapper.
 */
export function spawnTypeScript(entry: string, args: string[], options: SpawnOptions): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', entry, ...args], options);
}

/**
 * Kills `child` (SIGKILL) when the current test finishes, if it is still running, and waits for it to
 * exit: registered right where a test spawns the CLI or the gateway, so no process outlives its test.
 */
export function killAfterTest<T extends ChildProcess>(child: T): T {
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  });
  return child;
}

/**
 * A burst of requests cut by `kill -9`: `step` runs in 8 concurrent loops against `child` until
 * `enough()` holds (polled with `poll`), then the process is killed with SIGKILL while requests are in
 * flight and the loops end. `step` answers whether its request did what it should, or `'done'` when it
 * has nothing left to send; one that throws ends its loop. Answers how many steps failed before the
 * kill (each a bug, not an effect of the kill).
 */
export async function killMidBurst(
  child: ChildProcess,
  step: () => Promise<boolean | 'done'>,
  enough: () => boolean,
  poll: { timeout: number; interval: number },
): Promise<number> {
  let killed = false;
  let failuresBeforeKill = 0;
  const loop = async () => {
    while (!killed) {
      try {
        const outcome = await step();
        if (outcome === 'done') return;
        if (!outcome && !killed) failuresBeforeKill++;
      } catch {
        if (!killed) failuresBeforeKill++;
        return;
      }
    }
  };
  const loops = Array.from({ length: 8 }, loop);
  await vi.waitFor(() => {
    if (!enough()) throw new Error('the burst did not get far enough in time');
  }, poll);
  killed = true;
  child.kill('SIGKILL');
  await once(child, 'exit');
  await Promise.all(loops);
  expect(child.signalCode).toBe('SIGKILL');
  return failuresBeforeKill;
}
