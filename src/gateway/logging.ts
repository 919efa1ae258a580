/**
 * Structured logs: one pino logger for the gateway with secret paths redacted (defence in depth: the
 * code never hands a secret to the logger on purpose), and an envelop plugin that writes one line per
 * operation with its name, duration and outcome.
 */
import type { Writable } from 'node:stream';
import { type DocumentNode, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import pino from 'pino';
import { errorCodes } from './error-code.ts';
import { useOperationOutcome } from './operation-outcome.ts';

/** Paths that could carry a secret if someone ever logs a header bag, a record or an input. */
const REDACT_PATHS = [
  'headers["x-session-api-key"]',
  'headers.authorization',
  'req.headers["x-session-api-key"]',
  'req.headers.authorization',
  '*.sessionApiKey',
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

/** The operation's name from the document (clients often omit `operationName` in the request). */
function operationName(document: DocumentNode, requested: string | null | undefined): string {
  return getOperationAST(document, requested)?.name?.value ?? requested ?? 'anonymous';
}

/**
 * One log line per executed operation: `operation`, `type`, `durationMs`, `outcome` (`ok` | `error`)
 * and the error codes. Variables are never logged (they carry tokens and MCP keys).
 * Subscriptions log when their stream ends (completed, left, failed or cut by shutdown); a subscription
 * refused before it streamed logs at once. Every hook is guarded: a fault in logging is itself logged
 * (`observer failed`) and the operation goes on.
 */
export function useOperationLog(logger: pino.Logger): Plugin {
  const report = (error: unknown) => logger.error({ err: error, observer: 'log' }, 'observer failed');
  return useOperationOutcome('log', report, (document, requested, type) => {
    const operation = operationName(document, requested);
    const startedAt = performance.now();
    return (errors) => {
      const durationMs = Math.round((performance.now() - startedAt) * 100) / 100;
      const codes = errorCodes(errors);
      const line = { operation, type, durationMs, outcome: codes.length ? 'error' : 'ok' };
      if (codes.length) logger.warn({ ...line, errorCodes: codes }, 'operation');
      else logger.info(line, 'operation');
    };
  });
}
