/**
 * Structured logs: one pino logger for the gateway with secret paths redacted (defence in depth: the
 * code never hands a secret to the logger on purpose), and an envelop plugin that writes one line per
 * operation with its name, duration and outcome.
 *
 * Lines go to stdout asynchronously and in batches: a line waits in the buffer until ~8 KiB of lines
 * are there or 25 ms have passed, whichever comes first, then one write hands them all to libuv's
 * thread pool. pino's synchronous default made the event loop wait for a write syscall per operation
 * (5-13% of its time in issue 31's profile, and all of it while a log reader is slow); writing each
 * line asynchronously took the wait off the event loop but still cost a write, and its dispatch, per
 * line (~4% of the gateway's CPU on the history bench), which a batch shares among ~40 lines. Whoever
 * exits the process awaits {@link flushLogs} first (src/index.ts); pino's exit hook writes what is
 * still buffered synchronously.
 */
import type { Writable } from 'node:stream';
import pino from 'pino';
import { CREDENTIAL_HEADERS } from '../../upstream/credentials.ts';
import { errorCodes } from './error-code.ts';
import {
  flushEndedOperations,
  type ObservedOperation,
  type OperationObserver,
  type OperationWatch,
} from './operation-observer.ts';

/**
 * Paths that could carry a secret if someone ever logs a header bag, a record or an input: every
 * credential header (upstream/credentials.ts) of a header bag, and the secret fields of records,
 * inputs and graphql-ws `connectionParams`.
 */
const REDACT_PATHS = [
  ...CREDENTIAL_HEADERS.flatMap((name) => [`headers["${name}"]`, `req.headers["${name}"]`]),
  '*.sessionApiKey',
  '*.accessToken',
  '*.session_api_key',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.env',
  'variables',
];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** pino level. @default 'info' */
  level?: string;
  /**
   * Where lines go (tests capture them).
   * @default stdout through an asynchronous SonicBoom that writes lines in batches (see the module)
   */
  destination?: Writable;
}

/** The gateway logger. */
export function createLogger(options: LoggerOptions = {}): pino.Logger {
  const settings: pino.LoggerOptions = {
    name: 'gateway',
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return pino(settings, options.destination ?? batchedStdout());
}

/** About the bytes of lines gathered before a write (and SonicBoom's `minLength`; below its 16 KiB `maxWrite`). */
const BATCH_BYTES = 8 * 1024;
/** The longest a line waits for a batch to fill before it is written anyway. */
const BATCH_MS = 25;

/** The parts of SonicBoom (sonic-boom 4's own fields) the batching and {@link flushLogs} read. */
interface SonicDestination {
  destroyed: boolean;
  /** A write is on libuv's thread pool. */
  _writing: boolean;
  /** Bytes buffered and not yet handed to a write. */
  _len: number;
  /** Hands the buffered lines to a write, unless one is in flight. */
  flush(): void;
  /** Writes what is buffered, and waits for it (the exit hook). */
  flushSync(): void;
  write(line: string): boolean;
  once(event: 'drain' | 'error' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'error' | 'close', listener: () => void): unknown;
}

/**
 * Lines gathered in front of each batched destination and not yet handed to it, by destination: what
 * {@link flushLogs} hands over before it waits.
 */
const gatheredLines = new WeakMap<object, () => void>();

/**
 * stdout through an asynchronous SonicBoom, written in batches: lines are gathered here until
 * {@link BATCH_BYTES} or {@link BATCH_MS}, then handed to SonicBoom as one string, which it writes at
 * once. Gathered here, not by SonicBoom (`minLength`): its `write` measures the UTF-8 length of the
 * string it is growing at every line, a pass over up to 8 KiB per line (4.4 against 1.8 µs per line
 * through pino, 200,000 lines into a pipe). SonicBoom's own `periodicFlush` would write, an empty
 * string at least, on every tick of an idle gateway. pino.destination registers its exit hook (a
 * synchronous write of what is still buffered, `flushSync`): it hands the gathered lines over first.
 */
function batchedStdout(): pino.DestinationStream {
  const destination = pino.destination({
    sync: false,
    minLength: BATCH_BYTES,
  }) as unknown as SonicDestination;
  const { write, flush, flushSync } = destination;
  let gathered: string[] = [];
  let gatheredLength = 0;
  let batchDue = false;
  /** Gives SonicBoom the gathered lines; at {@link BATCH_BYTES} or more it starts writing them. */
  const handOver = () => {
    if (gathered.length === 0) return;
    const batch = gathered.length === 1 ? (gathered[0] as string) : gathered.join('');
    gathered = [];
    gatheredLength = 0;
    write.call(destination, batch);
  };
  const writeBatch = () => {
    batchDue = false;
    handOver();
    if (destination.destroyed || destination._len === 0) return;
    // A write in flight leaves what it did not take buffered below minLength: look again later.
    if (destination._writing) awaitBatch();
    else flush.call(destination);
  };
  const awaitBatch = () => {
    batchDue = true;
    setTimeout(writeBatch, BATCH_MS).unref();
  };
  // Own properties over SonicBoom's methods: pino calls the stream's `write` once per line; the exit
  // hooks call `flush` (beforeExit) and `flushSync` (exit).
  destination.write = function writeLine(line: string) {
    gathered.push(line);
    // UTF-16 units, not bytes: a batch only needs to be about this size.
    gatheredLength += line.length;
    if (gatheredLength >= BATCH_BYTES) handOver();
    else if (!batchDue) awaitBatch();
    return true;
  };
  // Both first tell the observers of operations already ended (operation-observer.ts tells them in
  // batches), so their lines are among those flushed, at exit too.
  destination.flush = function flushGathered() {
    flushEndedOperations();
    handOver();
    flush.call(destination);
  };
  destination.flushSync = function flushGatheredSync() {
    flushEndedOperations();
    handOver();
    flushSync.call(destination);
  };
  gatheredLines.set(destination, handOver);
  return destination as unknown as pino.DestinationStream;
}

function sonicDestinationOf(logger: pino.Logger): SonicDestination | null {
  const stream: unknown = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (typeof stream !== 'object' || stream === null) return null;
  // `_writing` is SonicBoom's own flag: its `flush(callback)` fsyncs, which a pipe refuses.
  const fields = stream as { _writing?: unknown; _len?: unknown };
  return typeof fields._writing === 'boolean' && typeof fields._len === 'number'
    ? (stream as SonicDestination)
    : null;
}

/**
 * Resolves once every line `logger` (or its parent) has written is out of the process, or after
 * `timeoutMs`; never rejects. Await it before `process.exit`: pino's exit hook writes what is
 * buffered, but a write in flight on libuv's thread pool may be lost or overtaken when the process
 * ends. Lines logged meanwhile are written too.
 */
export function flushLogs(logger: pino.Logger, timeoutMs = 2_000): Promise<void> {
  // The lines of operations already ended, which their observers are told of in batches.
  flushEndedOperations();
  const destination = sonicDestinationOf(logger);
  if (destination !== null) gatheredLines.get(destination)?.();
  if (destination === null || (!destination._writing && destination._len === 0)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      destination.off('drain', step);
      destination.off('error', done);
      destination.off('close', done);
      resolve();
    };
    // A drain comes when a write ends with less than a batch buffered: write that too, until none is.
    const step = () => {
      if (destination.destroyed || (!destination._writing && destination._len === 0)) return done();
      if (!destination._writing) destination.flush();
      destination.once('drain', step);
    };
    const timer = setTimeout(done, timeoutMs);
    destination.once('error', done);
    destination.once('close', done);
    step();
  });
}

/**
 * One log line per executed operation: `operation`, `type`, `durationMs`, `outcome` (`ok` | `error`)
 * and the error codes. Variables are never logged (they carry tokens and MCP keys).
 * Subscriptions log when their stream ends (completed, left, failed or cut by shutdown); a subscription
 * refused before it streamed logs at once. A fault in logging is itself logged (`observer failed`,
 * operation-observer.ts) and the operation goes on.
 */
export function operationLogObserver(logger: pino.Logger): OperationObserver {
  // The line's fields are fixed (name, type, duration, outcome, codes; never variables), so it skips
  // redaction, which walked every field of every line (a wildcard path matches any key): a child that
  // replaces the redact paths with none, on the same destination, level and bindings. Same bytes.
  const operations = logger.child({}, { redact: { paths: [], censor: '[redacted]' } });
  // The operation's name and type as a child's bindings, which pino serializes once, when the child is
  // made, instead of escaping the name into every line; a line's keys come out in the same order.
  // Descriptions are shared by every operation of a document (operation-observer.ts).
  const linesByOperation = new WeakMap<ObservedOperation, pino.Logger>();
  const linesOf = (operation: ObservedOperation) => {
    let lines = linesByOperation.get(operation);
    if (!lines) {
      lines = operations.child({ operation: operation.name ?? 'anonymous', type: operation.type });
      linesByOperation.set(operation, lines);
    }
    return lines;
  };
  return {
    name: 'log',
    start: (operation) => new LoggedOperation(linesOf(operation), performance.now()),
  };
}

/**
 * One operation's line, written when its observers are told it ended (in batches, with the time it
 * ended: operation-observer.ts). A class, not a closure per operation: an open
 * subscription holds this until its stream ends, so its size is paid once per idle subscriber.
 */
class LoggedOperation implements OperationWatch {
  /** The operation's own child logger (its name and type bound). */
  readonly #lines: pino.Logger;
  readonly #startedAt: number;

  constructor(lines: pino.Logger, startedAt: number) {
    this.#lines = lines;
    this.#startedAt = startedAt;
  }

  ended(errors: readonly unknown[], endedAt: number): void {
    const durationMs = Math.round((endedAt - this.#startedAt) * 100) / 100;
    // Most operations end without errors: no code set to build for them.
    const codes = errors.length ? errorCodes(errors) : NO_CODES;
    if (codes.length) this.#lines.warn({ durationMs, outcome: 'error', errorCodes: codes }, 'operation');
    else this.#lines.info({ durationMs, outcome: 'ok' }, 'operation');
  }
}

const NO_CODES: readonly string[] = Object.freeze([]);
