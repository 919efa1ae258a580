/**
 * Starts the real bundled local conversation service for a test: temp data dir, port 0, fast agent
 * timings, silent logger. Every suite in the project uses this instead of a hand-written fake.
 *
 *   const service = await startTestLocalService();   // beforeAll/afterAll suites close it themselves
 *   const service = await localServiceForTest();      // inside a test: closed when the test finishes
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { expect, onTestFinished } from 'vitest';
import { type LocalServiceOptions, startLocalService } from '../../src/local-service/index.ts';
import { killAfterTest } from './processes.ts';

/** Agent delays small enough for tests yet keeping the STARTING -> RUNNING order observable. */
const FAST_AGENT_TIMINGS = { startupMs: 20, replyMs: 20, replayStepMs: 5 } as const;

/** V1 start-task steps small enough for tests yet keeping every status observable in order. */
const FAST_V1 = { startStepMs: 5 } as const;

/** A local service started for one test. */
export interface TestLocalService {
  url: string;
  port: number;
  dataDir: string;
  /**
   * Stops the service and removes the data dir unless `keepDataDir` (for restart tests; the caller
   * then reuses it, e.g. one from {@link tempDataDirForTest}). Safe to call twice.
   */
  close(options?: { keepDataDir?: boolean }): Promise<void>;
  /** Makes the object usable with `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Creates a fresh temporary data directory. */
export function makeTempDataDir(prefix = 'local-service-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Removes a data directory made by {@link makeTempDataDir}. */
function removeDataDir(dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
}

/**
 * Starts the local service. Pass `dataDir` to reuse one (a restart); otherwise a temp dir is made.
 */
export async function startTestLocalService(
  options: Partial<LocalServiceOptions> = {},
): Promise<TestLocalService> {
  const dataDir = options.dataDir ?? makeTempDataDir();
  const service = await startLocalService({
    port: 0,
    logger: pino({ level: 'silent' }),
    ...options,
    agentTimings: { ...FAST_AGENT_TIMINGS, ...options.agentTimings },
    v1: { ...FAST_V1, ...options.v1 },
    dataDir,
  });
  let closed = false;
  const close = async (closeOptions: { keepDataDir?: boolean } = {}): Promise<void> => {
    if (closed) return;
    closed = true;
    await service.close();
    if (!closeOptions.keepDataDir) removeDataDir(dataDir);
  };
  return { url: service.url, port: service.port, dataDir, close, [Symbol.asyncDispose]: () => close() };
}

/** Options of {@link rest}. */
export interface RestOptions {
  /** @default 'GET' */
  method?: string;
  /** Sent as X-Session-API-Key. */
  key?: string;
  /** Sent as `Authorization: Bearer <bearer>`. */
  bearer?: string;
  /** JSON-encoded unless it is already a string (send raw text, e.g. invalid JSON, as a string). */
  body?: unknown;
  headers?: Record<string, string>;
}

/** A REST answer: status, parsed JSON body (undefined when not JSON) and headers. */
export interface RestResult<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** Tiny fetch wrapper for tests: `await rest(url, '/api/conversations', { method: 'POST', body: {} })`. */
export async function rest<T = unknown>(
  baseUrl: string,
  path: string,
  options: RestOptions = {},
): Promise<RestResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-session-api-key'] = options.key;
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method: options.method ?? 'GET', headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** Creates a conversation straight upstream (`POST /api/conversations`), expects 200, answers its id. */
export async function createConversation(
  serviceUrl: string,
  body: unknown = {},
  key?: string,
): Promise<string> {
  const created = await rest<{ conversation_id: string }>(serviceUrl, '/api/conversations', {
    method: 'POST',
    body,
    key,
  });
  expect(created.status).toBe(200);
  return created.body.conversation_id;
}

/** How many sockets the upstream counts on a conversation (`num_connections` of its record). */
export async function numConnections(serviceUrl: string, id: string, key?: string): Promise<number> {
  return (await rest<{ num_connections: number }>(serviceUrl, `/api/conversations/${id}`, { key })).body
    .num_connections;
}

/** One stored event as the events route answers it. */
export type StoredEvent = Record<string, unknown> & { id: number };

/** Every stored event of a conversation, read forward through the events route, 100 at a time. */
export async function storedEvents(serviceUrl: string, id: string, key?: string): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for (let start = 0; ; ) {
    const page = await rest<{ events: StoredEvent[]; has_more: boolean }>(
      serviceUrl,
      `/api/conversations/${id}/events?start_id=${start}&limit=100`,
      { key },
    );
    expect(page.status).toBe(200);
    events.push(...page.body.events);
    if (!page.body.has_more || page.body.events.length === 0) return events;
    start = (page.body.events.at(-1) as StoredEvent).id + 1;
  }
}

/** The local service's CLI entry, run through tsx by the crash tests (a real process to `kill -9`). */
export const LOCAL_SERVICE_MAIN = fileURLToPath(new URL('../../src/local-service/main.ts', import.meta.url));

/**
 * Spawns the local service CLI on port 0 with `dataDir`, no key and `extraArgs` (e.g. `--api v1`), and
 * resolves with its url once it announces it (`output()` is everything it printed so far). The child
 * is killed when the current test finishes, also when the start fails.
 */
export async function spawnLocalServiceCli(
  dataDir: string,
  extraArgs: string[] = [],
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      LOCAL_SERVICE_MAIN,
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--log-level',
      'silent',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SESSION_API_KEY: '' } },
  );
  killAfterTest(child);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(output);
      if (found?.[1]) resolve(found[1]);
    });
    child.once('exit', (code) => reject(new Error(`CLI exited early (${code})`)));
  });
  return { child, url, output: () => output };
}

/**
 * {@link startTestLocalService} inside a test, closed when that test finishes (vitest's
 * onTestFinished): the teardown is registered where the service is built, not in a far-away afterEach.
 */
export async function localServiceForTest(options: Parameters<typeof startTestLocalService>[0] = {}) {
  const service = await startTestLocalService(options);
  onTestFinished(() => service.close());
  return service;
}

/** {@link makeTempDataDir}, removed when the current test finishes. */
export function tempDataDirForTest(prefix?: string): string {
  const dataDir = makeTempDataDir(prefix);
  onTestFinished(() => removeDataDir(dataDir));
  return dataDir;
}
