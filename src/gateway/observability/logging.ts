/**
 * Structured logs: one pino logger for the gateway with secret paths redacted (defence in depth: the
 * code never hands a secret to the logger on purpose), and an envelop plugin that writes one line per
 * operation with its name, duration and outcome.
 */
import type { Writable } from 'node:stream';
import pino from 'pino';
import { CREDENTIAL_HEADERS } from '../../upstream/credentials.ts';
import { errorCodes } from './error-code.ts';
import type { OperationObserver } from './operation-observer.ts';

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
  /** Where lines go (tests capture them). @default stdout */
  destination?: Writable;
}

/** The gateway logger. */
export function createLogger(options: LoggerOptions = {}): pino.Logger {
  const settings: pino.LoggerOptions = {
    name: 'gateway',
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

/**
 * One log line per executed operation: `operation`, `type`, `durationMs`, `outcome` (`ok` | `error`)
 * and the error codes. Variables are never logged (they carry tokens and MCP keys).
 * Subscriptions log when their stream ends (completed, left, failed or cut by shutdown); a subscription
 * refused before it streamed logs at once. A fault in logging is itself logged (`observer failed`,
 * operation-observer.ts) and the operation goes on.
 */
export function operationLogObserver(logger: pino.Logger): OperationObserver {
  return {
    name: 'log',
    start({ name, type }) {
      const operation = name ?? 'anonymous';
      const startedAt = performance.now();
      return {
        ended(errors) {
          const durationMs = Math.round((performance.now() - startedAt) * 100) / 100;
          const codes = errorCodes(errors);
          const line = { operation, type, durationMs, outcome: codes.length ? 'error' : 'ok' };
          if (codes.length) logger.warn({ ...line, errorCodes: codes }, 'operation');
          else logger.info(line, 'operation');
        },
      };
    },
  };
}
