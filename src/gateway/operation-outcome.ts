/**
 * The hooks the operation log and the metrics share: when an operation ends and with which errors.
 * A query or mutation ends when it executed; a subscription when its stream ends (completed, left,
 * failed or cut by shutdown), or at once when it was refused before streaming. Each observer only says
 * what to do at the start and at the end (and, for the gauge, when a stream opens); the hooks are
 * guarded (observer-guard.ts): an observer's fault is reported, never the operation's.
 */
import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { guardObserver, type ObserverFault, type StreamWatch, watchStream } from './observer-guard.ts';

/** Called once per operation; returns what to call, once, with every error the client got. */
export type OperationStart = (
  document: DocumentNode,
  requestedName: string | null | undefined,
  type: 'execute' | 'subscribe',
) => (errors: readonly unknown[]) => void;

/** A stream began (a subscription past its setup); the returned callback runs once when it ends. */
export type StreamOpened = () => () => void;

/** The plugin: `start` per operation, `streamOpened` per subscription that streams. */
export function useOperationOutcome(
  observer: string,
  report: ObserverFault,
  start: OperationStart,
  streamOpened?: StreamOpened,
): Plugin {
  const streamFault = (error: unknown) => report(error, observer);
  const once = (finish: (errors: readonly unknown[]) => void) => {
    let finished = false;
    // Once, whatever path reports the end first.
    return (errors: readonly unknown[]) => {
      if (finished) return;
      finished = true;
      finish(errors);
    };
  };
  const plugin: Plugin = {
    onExecute({ args }) {
      const finish = once(start(args.document, args.operationName, 'execute'));
      return {
        onExecuteDone({ result }) {
          // Incremental delivery: the gateway does not use it, so no per-part detail.
          finish(Symbol.asyncIterator in result ? [] : (result.errors ?? []));
        },
      };
    },
    onSubscribe({ args }) {
      const finish = once(start(args.document, args.operationName, 'subscribe'));
      let watch: StreamWatch | undefined;
      return {
        onSubscribeResult({ result }) {
          if (!(Symbol.asyncIterator in result)) {
            // Refused before streaming (bad id, rate limited, draining): one result, reported now.
            finish(result.errors ?? []);
            return;
          }
          let errors: unknown[] = [];
          const closed = streamOpened?.();
          watch = watchStream(
            {
              result(next) {
                if (next.errors) errors = errors.concat(next.errors);
              },
              end(failure) {
                closed?.();
                finish(failure === undefined ? errors : [...errors, failure]);
              },
            },
            streamFault,
          );
          return watch.hooks;
        },
        onSubscribeError({ error }) {
          // Before streaming: subscribe itself failed. While streaming: the source failed.
          if (watch) watch.fail(error);
          else finish([error]);
        },
      };
    },
  };
  return guardObserver(plugin, observer, report);
}
