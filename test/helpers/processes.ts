import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { onTestFinished } from 'vitest';

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
