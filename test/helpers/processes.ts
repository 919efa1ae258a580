import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/**
 * Kills (SIGKILL) every child still running and waits for each to exit, emptying the list: the
 * afterEach of tests that spawn the CLI or the gateway, so no process outlives its test.
 */
export async function killChildren(children: ChildProcess[]): Promise<void> {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
}
