/** Subscriptions over SSE (Yoga's own, `Accept: text/event-stream`), as a test reads them. */
import type { ExecutionResult } from 'graphql';
import { onTestFinished } from 'vitest';
import { Collector } from './collector.ts';

/**
 * Subscribes over SSE (Yoga's own, `Accept: text/event-stream`) and yields each `next` payload until
 * the server completes or `signal` aborts.
 */
export async function* sseSubscribe(
  httpUrl: string,
  body: { query: string; variables?: Record<string, unknown> },
  headers: Record<string, string>,
  signal: AbortSignal,
): AsyncGenerator<ExecutionResult> {
  const response = await fetch(httpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok || !response.body) throw new Error(`SSE answered ${response.status}`);
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value: chunk, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        const lines = block.split('\n');
        const event = lines
          .find((line) => line.startsWith('event:'))
          ?.slice(6)
          .trim();
        const data = lines
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('\n');
        if (event === 'complete') return;
        if (event === 'next' && data) yield JSON.parse(data) as ExecutionResult;
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * One SSE subscription drained into a {@link Collector}; `abort()` cuts it, as happens anyway when the
 * current test finishes.
 */
export function subscribeOverSse<T = ExecutionResult>(
  httpUrl: string,
  body: { query: string; variables?: Record<string, unknown> },
  headers: Record<string, string> = {},
): Collector<T> & { abort(): void } {
  const controller = new AbortController();
  onTestFinished(() => controller.abort());
  const stream = sseSubscribe(httpUrl, body, headers, controller.signal) as AsyncIterable<T>;
  return Object.assign(new Collector(stream), { abort: () => controller.abort() });
}
