/**
 * Structured logs: one pino logger for the gateway with secret paths redacted (defence in depth: the
 * code never hands a secret to the logger on purpose), and an envelop plugin that writes one line per
 * operation with its name, duration and outcome.
 */
import type { Writable } from 'node:stream';
import { type DocumentNode, GraphQLError, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import pino from 'pino';

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

function errorCodes(errors: readonly unknown[]): string[] {
  const codes = new Set<string>();
  for (const error of errors) {
    const code = error instanceof GraphQLError ? error.extensions.code : undefined;
    codes.add(typeof code === 'string' ? code : 'INTERNAL');
  }
  return [...codes];
}

/**
 * One log line per executed operation: `operation`, `type`, `durationMs`, `outcome` (`ok` | `error`)
 * and the error codes. Variables are never logged (they carry tokens and MCP keys).
 * Subscriptions log when their stream ends.
 */
export function useOperationLog(logger: pino.Logger): Plugin {
  const start = (operation: string, type: string) => {
    const startedAt = performance.now();
    return (errors: readonly unknown[]) => {
      const durationMs = Math.round((performance.now() - startedAt) * 100) / 100;
      const codes = errorCodes(errors);
      const line = { operation, type, durationMs, outcome: codes.length ? 'error' : 'ok' };
      if (codes.length) logger.warn({ ...line, errorCodes: codes }, 'operation');
      else logger.info(line, 'operation');
    };
  };
  return {
    onExecute({ args }) {
      const finish = start(operationName(args.document, args.operationName), 'execute');
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result) {
            // Incremental delivery; the gateway does not use it, so log without per-part detail.
            finish([]);
            return;
          }
          finish(result.errors ?? []);
        },
      };
    },
    onSubscribe({ args }) {
      const finish = start(operationName(args.document, args.operationName), 'subscribe');
      let errors: unknown[] = [];
      return {
        onSubscribeResult() {
          return {
            onNext({ result }) {
              if (result.errors) errors = errors.concat(result.errors);
            },
            onEnd() {
              finish(errors);
            },
          };
        },
        onSubscribeError({ error }) {
          finish([error]);
        },
      };
    },
  };
}
