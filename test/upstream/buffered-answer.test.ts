/**
 * The buffered exchange (http-exchange.ts over buffered-answer.ts) against a real HTTP server on port
 * 0: the attempt's deadline still cuts a call at any stage (no headers, a trickling body), the caller's
 * abort still cuts it with its reason, and afterwards nothing is left listening on the caller's signal
 * and no timer is left armed, whatever the outcome. The body is decoded exactly as undici's
 * `body.text()` (the previous implementation) decodes it.
 */

import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { type Dispatcher, Pool } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeBody } from '../../src/upstream/buffered-answer.ts';
import { UpstreamError } from '../../src/upstream/failures.ts';
import { exchange, type UpstreamRequest } from '../../src/upstream/http-exchange.ts';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server answering with `handler`, counting requests and noting when each one's connection closed. */
async function serve(handler: Handler) {
  const state = { requests: 0, closed: 0 };
  const server: Server = createServer((request, response) => {
    state.requests++;
    response.on('close', () => state.closed++);
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pool = new Pool(origin, { connections: 4 });
  closers.push(async () => {
    await pool.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { origin, pool, state };
}

function call(
  target: { origin: string; pool: Dispatcher },
  signal: AbortSignal | undefined,
  timeoutMs = 5_000,
): Promise<unknown> {
  const req: UpstreamRequest = {
    method: 'GET',
    path: '/x',
    credentials: { kind: 'session-api-key', key: 'secret-key' },
    signal,
  };
  return exchange({ dispatcher: target.pool, origin: target.origin, timeoutMs }, req, () => {});
}

/**
 * Watches the deadline timers (those armed for `timeoutMs`, a value nothing else here uses): `armed()`
 * counts the ones neither cleared nor fired.
 */
function watchDeadlineTimers(timeoutMs: number): { armed: () => number } {
  const live = new Set<unknown>();
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const set = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
    callback: (...args: unknown[]) => void,
    delay?: number,
    ...args: unknown[]
  ) => {
    if (delay !== timeoutMs) return realSet(callback, delay, ...args);
    const timer = realSet(() => {
      live.delete(timer);
      callback(...args);
    }, delay);
    live.add(timer);
    return timer;
  }) as typeof setTimeout);
  const clear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((timer?: NodeJS.Timeout) => {
    live.delete(timer);
    realClear(timer);
  }) as typeof clearTimeout);
  closers.push(async () => {
    set.mockRestore();
    clear.mockRestore();
  });
  return { armed: () => live.size };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return (error as UpstreamError).code;
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('buffered exchange: deadline, abort and teardown', () => {
  it('answers the parsed body and leaves no listener on the caller signal and no timer', async () => {
    const upstream = await serve((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end('{"results":[1,2,3]}');
    });
    const controller = new AbortController();
    const timers = watchDeadlineTimers(4_321);
    const pending = call(upstream, controller.signal, 4_321);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    expect(timers.armed()).toBe(1);
    await expect(pending).resolves.toEqual({ results: [1, 2, 3] });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(timers.armed()).toBe(0);
  });

  it('cuts a body that trickles past the deadline with UPSTREAM_TIMEOUT and closes the connection', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('[');
      // One byte per 40 ms: undici's idle timeouts never fire, only the attempt's deadline can.
      const trickle = setInterval(() => response.write(' '), 40);
      response.on('close', () => clearInterval(trickle));
    });
    const controller = new AbortController();
    const timers = watchDeadlineTimers(300);
    const started = Date.now();
    expect(await codeOf(call(upstream, controller.signal, 300))).toBe('UPSTREAM_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(3_000);
    await until(() => upstream.state.closed === 1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(timers.armed()).toBe(0);
  });

  it('cuts a call whose headers never come with UPSTREAM_TIMEOUT', async () => {
    const upstream = await serve(() => {});
    const controller = new AbortController();
    expect(await codeOf(call(upstream, controller.signal, 200))).toBe('UPSTREAM_TIMEOUT');
    await until(() => upstream.state.closed === 1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it("aborts with the caller's coded reason before the headers (the operation deadline)", async () => {
    const upstream = await serve(() => {});
    const controller = new AbortController();
    const reason = new UpstreamError('OPERATION_TIMEOUT', 'The operation did not finish.');
    const timers = watchDeadlineTimers(4_321);
    const pending = call(upstream, controller.signal, 4_321);
    await until(() => upstream.state.requests === 1);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await until(() => upstream.state.closed === 1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(timers.armed()).toBe(0);
  });

  it('aborts during the body with REQUEST_CANCELLED when the caller goes away', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"results":[');
    });
    const controller = new AbortController();
    let status: number | undefined;
    const pending = exchange(
      { dispatcher: upstream.pool, origin: upstream.origin, timeoutMs: 5_000 },
      {
        method: 'GET',
        path: '/x',
        credentials: { kind: 'none' },
        signal: controller.signal,
      },
      (answered) => {
        status = answered;
      },
    );
    await until(() => status === 200);
    controller.abort();
    expect(await codeOf(pending)).toBe('REQUEST_CANCELLED');
    await until(() => upstream.state.closed === 1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('never sends a call whose caller already gave up', async () => {
    const upstream = await serve((_request, response) => response.end('{}'));
    const controller = new AbortController();
    controller.abort();
    const timers = watchDeadlineTimers(4_321);
    expect(await codeOf(call(upstream, controller.signal, 4_321))).toBe('REQUEST_CANCELLED');
    expect(upstream.state.requests).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(timers.armed()).toBe(0);
  });

  it('arms nothing for a body that cannot be written (the call fails before it starts)', async () => {
    const upstream = await serve((_request, response) => response.end('{}'));
    const controller = new AbortController();
    const timers = watchDeadlineTimers(4_321);
    const pending = exchange(
      { dispatcher: upstream.pool, origin: upstream.origin, timeoutMs: 4_321 },
      {
        method: 'POST',
        path: '/x',
        credentials: { kind: 'none' },
        body: { count: 1n },
        signal: controller.signal,
      },
      () => {},
    );
    await expect(pending).rejects.toBeInstanceOf(TypeError);
    expect(upstream.state.requests).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(timers.armed()).toBe(0);
  });

  it('maps a refused connection and a dispatcher that throws, and leaves nothing behind', async () => {
    const upstream = await serve(() => {});
    const port = new URL(upstream.origin).port;
    await closers.splice(0)[0]?.();
    const refused = new Pool(`http://127.0.0.1:${port}`);
    closers.push(() => refused.destroy());
    const controller = new AbortController();
    const timers = watchDeadlineTimers(4_321);
    expect(
      await codeOf(call({ origin: `http://127.0.0.1:${port}`, pool: refused }, controller.signal, 4_321)),
    ).toBe('UPSTREAM_UNAVAILABLE');
    const throwing = {
      dispatch() {
        throw new Error('not today');
      },
    } as unknown as Dispatcher;
    expect(await codeOf(call({ origin: upstream.origin, pool: throwing }, controller.signal, 4_321))).toBe(
      'UPSTREAM_ERROR',
    );
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(timers.armed()).toBe(0);
  });
});

/** undici's own body reader, which `exchange` used before (`(await request()).body.text()`). */
const { Readable: UndiciBody } = createRequire(import.meta.url)('undici/lib/api/readable.js') as {
  Readable: new (
    options: object,
  ) => NodeJS.ReadableStream & { push(chunk: Buffer | null): boolean; text(): Promise<string> };
};

async function undiciText(chunks: Buffer[]): Promise<string> {
  const body = new UndiciBody({ resume() {}, abort() {}, contentType: '', contentLength: null });
  for (const chunk of chunks) body.push(chunk);
  body.push(null);
  return body.text();
}

describe('decodeBody', () => {
  it("decodes any bytes in any chunks as undici's body.text() (BOM, malformed UTF-8, split characters)", async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => new Uint8Array(Buffer.from(text))),
      fc
        .string({ unit: 'grapheme', maxLength: 20 })
        .map((text) => new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]))),
    );
    await fc.assert(
      fc.asyncProperty(bytes, fc.array(fc.nat(), { maxLength: 4 }), async (all, cuts) => {
        const positions = [...new Set(cuts.map((cut) => cut % (all.length + 1)))].sort((a, b) => a - b);
        const chunks: Buffer[] = [];
        let start = 0;
        for (const end of [...positions, all.length]) {
          if (end > start) chunks.push(Buffer.from(all.subarray(start, end)));
          start = Math.max(start, end);
        }
        const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
        expect(decodeBody(chunks, length)).toBe(await undiciText(chunks));
      }),
      { numRuns: 500 },
    );
  });
});
