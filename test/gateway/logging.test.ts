/**
 * The gateway's log lines: the per-operation line is written without running redaction and is the
 * same bytes the redacting logger writes for it; every other line is still redacted; lines written
 * asynchronously to stdout all get out before the process exits (flushLogs), including on SIGTERM;
 * they go out in batches, and a lone line still goes out on its own after a short wait.
 */
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createLogger, operationLogObserver } from '../../src/gateway/observability/logging.ts';
import { tempDataDirForTest } from '../helpers/local-service.ts';
import { killAfterTest, spawnTypeScript } from '../helpers/processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');

function captured() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', destination }) };
}

/** A line without its `time`, the one field two writes of the same object differ in. */
const timeless = (line: string) => line.replace(/,"time":\d+/, '');

describe('the per-operation line', () => {
  it('is byte for byte what the redacting logger writes for it, with the parent’s bindings; other lines stay redacted', () => {
    const { lines, logger } = captured();
    const worker = logger.child({ worker: 3 });
    const observer = operationLogObserver(worker);
    observer
      .start({ name: 'History', type: 'execute', operationType: 'query' })
      .ended?.([], performance.now());
    const coded = new GraphQLError('slow', { extensions: { code: 'UPSTREAM_TIMEOUT' } });
    observer
      .start({ name: undefined, type: 'execute', operationType: 'mutation' })
      .ended?.([coded, new Error('bug')], performance.now());
    // A requested name is the caller's text (escaped once, into the child's bindings).
    observer
      .start({ name: 'Say "hé"\n\u2028\ud800', type: 'subscribe', operationType: 'subscription' })
      .ended?.([], performance.now());
    const [ok, failed, odd] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(odd).toMatchObject({ operation: 'Say "hé"\n\u2028\ud800', type: 'subscribe', outcome: 'ok' });
    expect(ok).toMatchObject({ level: 30, worker: 3, operation: 'History', type: 'execute', outcome: 'ok' });
    // The keys in the order log readers have always seen them.
    expect(Object.keys(ok ?? {})).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'name',
      'worker',
      'operation',
      'type',
      'durationMs',
      'outcome',
      'msg',
    ]);
    expect(failed).toMatchObject({
      level: 40,
      worker: 3,
      operation: 'anonymous',
      type: 'execute',
      outcome: 'error',
      errorCodes: ['UPSTREAM_TIMEOUT', 'INTERNAL'],
    });

    // The same fields through the redacting logger: the same bytes but for the time.
    const {
      name: _n,
      hostname: _h,
      pid: _p,
      time: _t,
      level: _l,
      msg: _m,
      worker: _w,
      ...okFields
    } = ok ?? {};
    const {
      name: _n2,
      hostname: _h2,
      pid: _p2,
      time: _t2,
      level: _l2,
      msg: _m2,
      worker: _w2,
      ...failedFields
    } = failed ?? {};
    const {
      name: _n3,
      hostname: _h3,
      pid: _p3,
      time: _t3,
      level: _l3,
      msg: _m3,
      worker: _w3,
      ...oddFields
    } = odd ?? {};
    worker.info(okFields, 'operation');
    worker.warn(failedFields, 'operation');
    worker.info(oddFields, 'operation');
    expect(lines.slice(3).map(timeless)).toEqual(lines.slice(0, 3).map(timeless));

    // The observer's unredacted child changed nothing for the logger it was made from.
    worker.info({ variables: { token: 'tok-1' }, input: { apiKey: 'key-2' } }, 'other');
    expect(JSON.parse(lines[6] as string)).toMatchObject({
      variables: '[redacted]',
      input: { apiKey: '[redacted]' },
    });
    expect(lines[6]).not.toMatch(/tok-1|key-2/);
  });
});

/** Runs `script` (an ES module importing the logger) in a child process; its stdout as it arrives. */
function runScript(script: string) {
  const child = killAfterTest(
    spawnTypeScript('--input-type=module', ['--eval', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, exit };
}

/** The `n` of each line a child wrote, in the order written. */
function loggedNumbers(chunks: Buffer[]): number[] {
  return Buffer.concat(chunks)
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { n: number }).n);
}

describe('lines written asynchronously to stdout', () => {
  it('all get out, in order, when the process exits after flushLogs while stdout is not being read', async () => {
    const count = 20_000;
    const { child, exit } = runScript(`
      import { createLogger, flushLogs } from './src/gateway/observability/logging.ts';
      const logger = createLogger();
      // Half, then a turn of the event loop so a write is in flight (blocked on the full pipe), then
      // the rest queued behind it.
      for (let n = 0; n < ${count / 2}; n++) logger.info({ n }, 'line');
      await new Promise((done) => setTimeout(done, 100));
      for (let n = ${count / 2}; n < ${count}; n++) logger.info({ n }, 'line');
      await flushLogs(logger, 10_000);
      process.exit(0);
    `);
    const stdout = child.stdout;
    if (!stdout) throw new Error('no stdout');
    // The reader pauses at first: the pipe fills and a write stays in flight while the child exits.
    stdout.pause();
    const chunks: Buffer[] = [];
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((done) => setTimeout(done, 500));
    stdout.resume();
    expect(await exit).toBe(0);
    const numbers = loggedNumbers(chunks);
    expect(numbers.length).toBe(count);
    expect(numbers.every((n, index) => n === index)).toBe(true);
  }, 30_000);

  it('still gathered when the process exits without flushLogs get out through pino’s exit hook', async () => {
    // Fewer than a batch, and no turn of the event loop: every line is still gathered in front of
    // SonicBoom when process.exit runs the exit hook (flushSync).
    const { child, exit } = runScript(`
      import { createLogger } from './src/gateway/observability/logging.ts';
      const logger = createLogger();
      for (let n = 0; n < 30; n++) logger.info({ n }, 'line');
      process.exit(0);
    `);
    const chunks: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
    expect(await exit).toBe(0);
    expect(loggedNumbers(chunks)).toEqual(Array.from({ length: 30 }, (_, n) => n));
  }, 30_000);

  it('go out in batches, and a lone line goes out without waiting for a batch to fill', async () => {
    const child = killAfterTest(
      spawnTypeScript(
        '--input-type=module',
        [
          '--eval',
          `
          import pino from 'pino';
          import { createLogger, flushLogs } from './src/gateway/observability/logging.ts';
          const logger = createLogger();
          const stream = logger[pino.symbols.streamSym];
          let writes = 0;
          stream.on('write', () => writes++);
          // As operations end: one line now and then, each on its own turn of the event loop.
          for (let n = 0; n < 200; n++) {
            logger.info({ n }, 'line');
            if (n % 4 === 3) await new Promise((done) => setTimeout(done, 1));
          }
          await flushLogs(logger);
          const batched = writes;
          const started = performance.now();
          logger.info({ n: 200 }, 'line');
          // The batch timer is unref'd (it never holds a process open): keep this one open meanwhile.
          const open = setTimeout(() => {}, 5_000);
          await new Promise((done) => stream.once('write', done));
          clearTimeout(open);
          process.stderr.write(JSON.stringify({ batched, loneMs: performance.now() - started }));
          `,
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += String(chunk);
    });
    child.stderr?.on('data', (chunk) => {
      stderr += String(chunk);
    });
    expect(await new Promise((done) => child.once('exit', done))).toBe(0);
    const numbers = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { n: number }).n);
    expect(numbers).toEqual(Array.from({ length: 201 }, (_, n) => n));
    const { batched, loneMs } = JSON.parse(stderr) as { batched: number; loneMs: number };
    // 200 lines over ~50 turns (~60 ms) share a few writes: one per turn was ~50.
    expect(batched).toBeLessThanOrEqual(8);
    // Written by the batch timer (25 ms), not held until more lines come.
    expect(loneMs).toBeLessThan(1_000);
  }, 30_000);

  it('on SIGTERM the gateway process writes its operation lines and its last line before it exits', async () => {
    const child = killAfterTest(
      spawnTypeScript('src/index.ts', ['--port', '0'], {
        cwd: ROOT,
        env: {
          ...process.env,
          LOG_LEVEL: 'info',
          DATA_DIR: tempDataDirForTest('gateway-logging-'),
          LOCAL_SERVICE_PORT: '0',
          PORT: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    child.stdout?.on('data', (chunk) => {
      stdout += String(chunk);
    });
    const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    let url: string | undefined;
    for (let i = 0; i < 300 && !url; i++) {
      url = /gateway: (http:\/\/\S+\/graphql)/.exec(stdout)?.[1];
      if (!url) await new Promise((done) => setTimeout(done, 50));
    }
    if (!url) throw new Error(`no gateway address printed: ${stdout}`);
    const queries = 5;
    for (let i = 0; i < queries; i++) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query Recent { conversations(first: 1) { edges { cursor } } }' }),
      });
      expect(response.status).toBe(200);
    }
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    const logged = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; operation?: string; signal?: string });
    expect(logged.filter((line) => line.msg === 'operation' && line.operation === 'Recent')).toHaveLength(
      queries,
    );
    expect(logged.filter((line) => line.msg === 'shutting down')).toEqual([
      expect.objectContaining({ signal: 'SIGTERM' }),
    ]);
  }, 40_000);
});
