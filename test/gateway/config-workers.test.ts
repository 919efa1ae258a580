/** `--workers` / `WORKERS` and `--worker-restarts` / `WORKER_RESTARTS_PER_MINUTE`. */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('worker settings', () => {
  it('default to one process and 10 replacements a minute', () => {
    expect(loadConfig([], {})).toMatchObject({ workers: 1, workerRestartsPerMinute: 10 });
  });

  it('read a count or auto (one per core), flag over env', () => {
    expect(loadConfig(['--workers', '3', '--worker-restarts', '0'], { WORKERS: '5' })).toMatchObject({
      workers: 3,
      workerRestartsPerMinute: 0,
    });
    expect(loadConfig([], { WORKERS: 'auto', WORKER_RESTARTS_PER_MINUTE: '4' })).toMatchObject({
      workers: availableParallelism(),
      workerRestartsPerMinute: 4,
    });
  });

  it('refuse anything else, naming the setting', () => {
    expect(() => loadConfig(['--workers', '0'], {})).toThrow(
      new ConfigError('--workers', 'expected 1..256, got 0'),
    );
    expect(() => loadConfig([], { WORKERS: 'many' })).toThrow(
      new ConfigError('WORKERS', 'expected 1..256 or auto, got "many"'),
    );
    expect(() => loadConfig([], { WORKER_RESTARTS_PER_MINUTE: '-1' })).toThrow(
      /Invalid WORKER_RESTARTS_PER_MINUTE/,
    );
  });
});
