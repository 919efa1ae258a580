/**
 * `--workers 2` as an operator runs it (the real CLI in its own process): two gateway processes answer
 * on one port, SIGTERM to the primary drains both (operations in flight in each complete), and a worker
 * killed with SIGKILL is replaced while the port keeps answering.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { tempDataDirForTest } from '../helpers/local-service.ts';
import { misbehavingUpstreamForTest, sendJson } from '../helpers/misbehaving-upstream.ts';
import { killAfterTest } from '../helpers/processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Node itself (not the tsx wrapper), so the child's pid is the primary's. When the test finishes the
 * primary is killed first (so it forks no replacements), then every worker it announced.
 */
function startCli(args: string[], env: Record<string, string> = {}) {
  const workerPids: number[] = [];
  onTestFinished(() => {
    for (const pid of workerPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killAfterTest(child);
  let stdout = '';
  child.stdout?.on('data', (chunk) => {
    stdout += String(chunk);
    for (const match of String(chunk).matchAll(/worker \d+ \(pid (\d+)\)/g))
      workerPids.push(Number(match[1]));
  });
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    child,
    exit,
    stdout: () => stdout,
    /** Pids of the `worker N (pid P) listening` lines, in order. */
    workers: () => [...stdout.matchAll(/worker (\d+) \(pid (\d+)\) listening/g)].map((m) => Number(m[2])),
    url: () => /gateway: (http:\/\/\S+\/graphql)/.exec(stdout)?.[1],
  };
}

/** One request on a fresh connection (no keep-alive), so the cluster hands each to the next worker. */
function freshRequest(
  url: string,
  method: 'GET' | 'POST',
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const req = request(
      url,
      { method, agent: false, headers: body ? { 'content-type': 'application/json' } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

/** The `worker` label values in one /metrics answer. */
async function metricsWorker(gatewayUrl: string): Promise<string | undefined> {
  const answer = await freshRequest(gatewayUrl.replace(/\/graphql$/, '/metrics'), 'GET');
  expect(answer.status).toBe(200);
  const labels = new Set([...answer.text.matchAll(/worker="(\d+)"/g)].map((m) => m[1]));
  // Every series of one answer comes from one worker.
  expect(labels.size).toBe(1);
  return [...labels][0];
}

const LIST = JSON.stringify({ query: '{ conversations(first: 1) { edges { node { id } } } }' });

describe('--workers 2', () => {
  it('runs two worker processes on one port, each answering GraphQL and its own labelled /metrics', async () => {
    const dataDir = tempDataDirForTest('gateway-workers-');
    const cli = startCli(['--workers', '2'], { DATA_DIR: dataDir, LOCAL_SERVICE_PORT: '0' });
    await vi.waitFor(() => expect(cli.url()).toBeDefined(), { timeout: 60_000, interval: 50 });
    const url = cli.url() as string;
    // The embedded local service was started once, by the primary.
    expect(cli.stdout().match(/local conversation service:/g)).toHaveLength(1);
    const pids = cli.workers();
    expect(pids).toHaveLength(2);
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(cli.child.pid);

    const seen = new Set<string | undefined>();
    for (let i = 0; i < 6; i++) seen.add(await metricsWorker(url));
    expect(seen).toEqual(new Set(['1', '2']));
    for (let i = 0; i < 4; i++) {
      const answer = await freshRequest(url, 'POST', LIST);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({ data: { conversations: { edges: [] } } });
    }
    cli.child.kill('SIGTERM');
    expect(await cli.exit).toBe(0);
    await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 10_000, interval: 50 });
  }, 90_000);

  it('drains both workers on SIGTERM: a query in flight in each completes, then all exit 0', async () => {
    const held: Array<() => void> = [];
    const upstream = await misbehavingUpstreamForTest((req, res) => {
      if (req.url?.startsWith('/api/conversations')) {
        held.push(() => sendJson(res, 200, { results: [], next_page_id: null }));
      } else sendJson(res, 404, { message: 'not here' });
    });
    // V0 named: with `auto` each worker would first probe the double, which holds that probe too.
    const cli = startCli(['--workers', '2', '--upstream', upstream.url, '--upstream-api', 'v0']);
    await vi.waitFor(() => expect(cli.url()).toBeDefined(), { timeout: 60_000, interval: 50 });
    const url = cli.url() as string;
    const pids = cli.workers();
    expect(pids).toHaveLength(2);

    // Two fresh connections: round-robin gives one to each worker.
    const inFlight = [freshRequest(url, 'POST', LIST), freshRequest(url, 'POST', LIST)];
    await vi.waitFor(() => expect(held).toHaveLength(2), { timeout: 20_000, interval: 50 });
    // Each worker holds one of them: its own /metrics shows one upstream call in flight.
    const inFlightByWorker = new Map<string, string>();
    for (let i = 0; i < 6 && inFlightByWorker.size < 2; i++) {
      const text = (await freshRequest(url.replace(/\/graphql$/, '/metrics'), 'GET')).text;
      const match = /^upstream_requests_in_flight\{worker="(\d+)"\} (\d+)$/m.exec(text);
      if (match) inFlightByWorker.set(match[1] as string, match[2] as string);
    }
    expect(Object.fromEntries(inFlightByWorker)).toEqual({ '1': '1', '2': '1' });

    cli.child.kill('SIGTERM');
    await sleep(300);
    // Still draining: nobody has exited while their queries are held upstream.
    expect(cli.child.exitCode).toBeNull();
    expect(pids.every(alive)).toBe(true);
    for (const release of held.splice(0)) release();
    for (const answer of await Promise.all(inFlight)) {
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({ data: { conversations: { edges: [] } } });
    }
    expect(await cli.exit).toBe(0);
    await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 10_000, interval: 50 });
  }, 90_000);

  it('replaces a worker killed with SIGKILL, and the port keeps answering', async () => {
    const dataDir = tempDataDirForTest('gateway-workers-');
    const cli = startCli(['--workers', '2'], { DATA_DIR: dataDir, LOCAL_SERVICE_PORT: '0' });
    await vi.waitFor(() => expect(cli.url()).toBeDefined(), { timeout: 60_000, interval: 50 });
    const url = cli.url() as string;
    const [victim, survivor] = cli.workers() as [number, number];

    process.kill(victim, 'SIGKILL');
    await vi.waitFor(() => expect(cli.workers()).toHaveLength(3), { timeout: 60_000, interval: 50 });
    const replacement = cli.workers()[2] as number;
    expect([victim, survivor]).not.toContain(replacement);
    expect(alive(survivor)).toBe(true);
    expect(/worker 3 \(pid \d+\) listening/.test(cli.stdout())).toBe(true);

    const seen = new Set<string | undefined>();
    for (let i = 0; i < 6; i++) {
      const answer = await freshRequest(url, 'POST', LIST);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({ data: { conversations: { edges: [] } } });
    }
    // Scrapes in a row (not interleaved with the queries: round-robin would pair each kind with one worker).
    for (let i = 0; i < 6; i++) seen.add(await metricsWorker(url));
    // The survivor and the replacement (worker 3) share the port; the victim's worker id is gone.
    // (Workers announce themselves in whatever order they start listening, so read the victim's id.)
    const victimId = new RegExp(`worker (\\d+) \\(pid ${victim}\\)`).exec(cli.stdout())?.[1];
    expect(['1', '2']).toContain(victimId);
    expect(seen).toEqual(new Set([victimId === '1' ? '2' : '1', '3']));
    cli.child.kill('SIGTERM');
    expect(await cli.exit).toBe(0);
  }, 120_000);
});
