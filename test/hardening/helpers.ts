/**
 * Small helpers of the hardening tests: a raw GraphQL POST that returns status, headers and the parsed
 * body (or the raw text when it is not JSON), and a cleanup stack for afterEach.
 */

import { startTestGateway, type TestGatewayOptions } from '../helpers/gateway.ts';
import { startTestLocalService } from '../helpers/local-service.ts';
/** A raw answer of the gateway. */
export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON, or undefined. */
  json:
    | {
        data?: Record<string, unknown> | null;
        errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
      }
    | undefined;
}

/** POSTs a body (an object is JSON-encoded, a string is sent as is) to the gateway. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<RawAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  const text = await response.text();
  let json: RawAnswer['json'];
  try {
    json = JSON.parse(text) as RawAnswer['json'];
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** The `extensions.code`s of an answer's errors. */
export function codes(answer: RawAnswer): unknown[] {
  return (answer.json?.errors ?? []).map((error) => error.extensions?.code);
}

/** A LIFO list of cleanups, run by `run()` in afterEach. */
export function cleanupStack() {
  const stack: Array<() => unknown> = [];
  return {
    add<T>(value: T, cleanup: (value: T) => unknown): T {
      stack.push(() => cleanup(value));
      return value;
    },
    async run() {
      while (stack.length > 0) await stack.pop()?.();
    },
  };
}

/** Reads one metric (summed over label sets matching `labels`) from the gateway's /metrics. */
export async function metric(
  graphqlUrl: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(new URL('/metrics', graphqlUrl))).text();
  let total = 0;
  let found = false;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const set = match[2] ?? '';
    if (!Object.entries(labels).every(([key, value]) => set.includes(`${key}="${value}"`))) continue;
    total += Number(match[3]);
    found = true;
  }
  return found ? total : Number.NaN;
}

/**
 * The real local service and a gateway with `hardening` in front of it, both closed by `cleanup` (the
 * suite's {@link cleanupStack}, run in afterEach), gateway first.
 */
export async function startServiceAndGateway(
  cleanup: ReturnType<typeof cleanupStack>,
  hardening: TestGatewayOptions['hardening'] = {},
) {
  const service = cleanup.add(await startTestLocalService(), (s) => s.close());
  const gateway = cleanup.add(await startTestGateway({ upstreamUrl: service.url, hardening }), (g) =>
    g.close(),
  );
  return { service, gateway };
}
