/**
 * Structured logs: one pino logger for the gateway with secret paths redacted (defence in depth: the
 * code never hands a secret to the logger on purpose), and an envelop plugin that writes one line per
 * operation with its name, duration and outcome.
 *
 * Lines go to stdout asynchronously: a line is handed to libuv's thread pool at once unless a write is
 * already in flight, in which case it joins the next write (no size threshold, so nothing waits at
 * low traffic). pino's synchronous default made the event loop wait for a write syscall per operation
 * (5-13% of its time in issue 31's profile, and all of it while a log reader is slow). The syscall is
 * not gone, only off the event loop, and lines share one only while a write is in flight, so the
 * process's CPU per request did not measurably drop (issue 31: within the bench's noise). Whoever
 * exits the process awaits {@link flushLogs} first (src/index.ts).
 */
import type { Writable } from 'node:stream';
import pino from 'pino';
import { CREDENTIAL_HEADERS } from '../../upstream/credentials.ts';
import { errorCodes } from './error-code.ts';
import type { ObservedOperation, OperationObserver, OperationWatch } from './operation-observer.ts';

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
   * @default stdout through an asynchronous SonicBoom (`sync: false`, no `minLength`)
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
  // pino.destination registers its own exit hook (a synchronous write of what is still queued); a write
  // already handed to libuv is what flushLogs waits for.
  return pino(settings, options.destination ?? pino.destination({ sync: false }));
}

/** The parts of SonicBoom (pino.destination) that tell whether a write is in flight. */
interface AsyncDestination {
  _writing: boolean;
  once(event: 'drain' | 'error' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'error' | 'close', listener: () => void): unknown;
}

function asyncDestinationOf(logger: pino.Logger): AsyncDestination | null {
  const stream: unknown = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  if (typeof stream !== 'object' || stream === null) return null;
  // `_writing` is SonicBoom's own flag (sonic-boom 4): its `flush()` without `minLength` calls back at
  // once, even with a write in flight, so it cannot be used to wait.
  return typeof (stream as { _writing?: unknown })._writing === 'boolean'
    ? (stream as AsyncDestination)
    : null;
}

/**
 * Resolves once every line `logger` (or its parent) has written is out of the process, or after
 * `timeoutMs`; never rejects. Await it before `process.exit`: pino's exit hook writes what is queued,
 * but a write in flight on libuv's thread pool may be lost or overtaken when the process ends.
 * Lines logged meanwhile are written too (a drain comes only once nothing is queued).
 */
export function flushLogs(logger: pino.Logger, timeoutMs = 2_000): Promise<void> {
  const destination = asyncDestinationOf(logger);
  if (destination === null || !destination._writing) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      destination.off('drain', done);
      destination.off('error', done);
      destination.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    destination.once('drain', done);
    destination.once('error', done);
    destination.once('close', done);
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
  return {
    name: 'log',
    start: (operation) => new LoggedOperation(operations, operation, performance.now()),
  };
}

/**
 * One operation's line, written when it ends. A class, not a closure per operation: an open
 * subscription holds this until its stream ends, so its size is paid once per idle subscriber.
 */
class LoggedOperation implements OperationWatch {
  readonly #lines: pino.Logger;
  readonly #operation: ObservedOperation;
  readonly #startedAt: number;

  constructor(lines: pino.Logger, operation: ObservedOperation, startedAt: number) {
    this.#lines = lines;
    this.#operation = operation;
    this.#startedAt = startedAt;
  }

  ended(errors: readonly unknown[]): void {
    const durationMs = Math.round((performance.now() - this.#startedAt) * 100) / 100;
    const operation = this.#operation.name ?? 'anonymous';
    const type = this.#operation.type;
    // Most operations end without errors: no code set to build for them.
    const codes = errors.length ? errorCodes(errors) : NO_CODES;
    const line = { operation, type, durationMs, outcome: codes.length ? 'error' : 'ok' };
    if (codes.length) this.#lines.warn({ ...line, errorCodes: codes }, 'operation');
    else this.#lines.info(line, 'operation');
  }
}

const NO_CODES: readonly string[] = Object.freeze([]);
