import { describe, expect, it, vi } from 'vitest';
import { killAfterTest, spawnTypeScript } from '../helpers/processes.ts';
import { ROOT } from '../helpers/replicas.ts';

async function run(mode: 'cluster' | 'memory'): Promise<number[]> {
  const child = spawnTypeScript('test/replicas/cluster-budget-fixture.ts', [], {
    cwd: ROOT,
    env: { ...process.env, BUDGET_MODE: mode },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  killAfterTest(child);
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  await vi.waitFor(() => expect(output).toContain('\n'), { timeout: 30_000, interval: 20 });
  return (JSON.parse(output) as { allowed: number[] }).allowed;
}

describe('one budget across node:cluster workers', () => {
  it('two workers spending 150 each against a budget of 100: exactly 100 allowed in all (per-process: 200)', async () => {
    const [clustered, separate] = await Promise.all([run('cluster'), run('memory')]);
    expect(clustered.reduce((sum, n) => sum + n, 0)).toBe(100);
    expect(separate).toEqual([100, 100]);
  }, 40_000);
});
