/**
 * Debian's chromium driven by playwright-core, for the GraphiQL browser test and its measurement
 * script (bench/graphiql-load.ts): launched headless with the flags a container needs (no sandbox, no
 * GPU, no background networking, component updates or sync: nothing leaves the machine on its own),
 * every non-loopback request refused, and a recording proxy that counts the bytes each page load
 * transferred. Never `npx playwright install`: the browser is Debian's package.
 *
 *   await using browser = await launchChromium();
 *   const proxy = await startRecordingProxy(gateway.url);
 *   await browser.page.goto(proxy.url);
 *   const firstLoad = await proxy.take();
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { listenOnLoopback, stopServer } from './loopback.ts';

/** Where Debian's `chromium` package puts the browser (`apt-get install -y chromium`). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Whether the browser is installed (a developer machine may lack it; CI installs it). */
export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/**
 * A port nothing listens on (discard): the browser's only proxy, so every request that is not for a
 * loopback address fails with "connection refused" without leaving the machine.
 */
const BLACKHOLE_PROXY = 'http://127.0.0.1:9';

/** A launched browser with its own, fresh profile; closing it ends chromium and removes the profile. */
export interface TestBrowser {
  context: BrowserContext;
  /** The first tab of the browser. */
  page: Page;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Launches chromium on a fresh profile in a temp dir, every non-loopback request refused by the
 * browser itself.
 *
 * Why a profile on disk: Playwright's `browser.newContext()` is an incognito context whose HTTP cache
 * lives in a small in-memory store, which evicted GraphiQL's page (the oldest entry) once the 2 MB of
 * assets were in; a real profile caches the way users' browsers do.
 *
 * Why a proxy and not `page.route`: Playwright turns the HTTP cache off as soon as any route is
 * registered (microsoft/playwright#7220), and a reload served from the cache is what the GraphiQL test
 * measures. Chromium bypasses proxies for loopback addresses by default, so the gateway on 127.0.0.1
 * is reached directly and anything else goes to a dead port. Tests still record every URL a page
 * asked for ({@link recordRequestedUrls}) and assert that none left loopback.
 */
export async function launchChromium(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--proxy-server=${BLACKHOLE_PROXY}`,
      ],
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return {
    context,
    page: context.pages()[0] ?? (await context.newPage()),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** One HTTP exchange that went over the wire between the browser and the gateway. */
export interface Exchange {
  method: string;
  /** Path and query. */
  path: string;
  status: number;
  /** `content-encoding` of the answer, or '' for none. */
  contentEncoding: string;
  /** Response bytes as sent: status line, headers and the (encoded) body. */
  bytes: number;
  /** Body bytes as sent (encoded). */
  bodyBytes: number;
}

/** A recording reverse proxy in front of the gateway (see {@link startRecordingProxy}). */
export interface RecordingProxy {
  /** The gateway URL rewritten to go through the proxy. */
  url: string;
  /**
   * Waits until no exchange has been open or started for `quietMs` (open event streams excepted)
   * or `timeoutMs` passed, then returns the finished exchanges and starts a new list.
   */
  take(options?: { quietMs?: number; timeoutMs?: number }): Promise<Exchange[]>;
  close(): Promise<void>;
}

/**
 * Starts a reverse proxy on 127.0.0.1 that forwards every request to `targetUrl`'s origin and records
 * what each answer cost on the wire. Why not the browser's own accounting: Chromium fetches dedicated
 * workers' scripts outside the page, and neither the DevTools protocol session of the page nor
 * Playwright's request sizes report those bytes reliably; the proxy sees every byte, and a request the
 * browser served from its cache never reaches it at all.
 */
export async function startRecordingProxy(targetUrl: string): Promise<RecordingProxy> {
  const target = new URL(targetUrl);
  const agent = new Agent({ keepAlive: true });
  let done: Exchange[] = [];
  const open = new Set<{ stream: boolean }>();
  let lastActivity = Date.now();
  const server = createServer((req, res) => {
    lastActivity = Date.now();
    const entry = { stream: String(req.headers.accept ?? '').includes('text/event-stream') };
    open.add(entry);
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (answer) => {
        const status = answer.statusCode ?? 0;
        let headerBytes = `HTTP/1.1 ${status} ${answer.statusMessage ?? ''}\r\n\r\n`.length;
        for (let i = 0; i < answer.rawHeaders.length; i += 2) {
          headerBytes += `${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}\r\n`.length;
        }
        let bodyBytes = 0;
        answer.on('data', (chunk: Buffer) => {
          bodyBytes += chunk.byteLength;
        });
        answer.on('end', () => {
          open.delete(entry);
          lastActivity = Date.now();
          done.push({
            method: req.method ?? '',
            path: req.url ?? '',
            status,
            contentEncoding: String(answer.headers['content-encoding'] ?? ''),
            bytes: headerBytes + bodyBytes,
            bodyBytes,
          });
        });
        res.writeHead(status, answer.statusMessage, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    forward.on('error', () => {
      open.delete(entry);
      res.destroy();
    });
    // The browser gave up (a closed subscription): end the gateway's side too.
    res.on('close', () => {
      open.delete(entry);
      forward.destroy();
    });
    req.pipe(forward);
  });
  const url = new URL(targetUrl);
  url.port = new URL(await listenOnLoopback(server)).port;
  return {
    url: url.href,
    async take({ quietMs = 500, timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      const busy = () => [...open].some((entry) => !entry.stream) || Date.now() - lastActivity < quietMs;
      while (busy() && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const taken = done;
      done = [];
      return taken;
    },
    async close() {
      await stopServer(server);
      agent.destroy();
    },
  };
}

/** Sum of the bytes on the wire. */
export function totalBytes(exchanges: readonly Exchange[]): number {
  return exchanges.reduce((sum, exchange) => sum + exchange.bytes, 0);
}

/** Every URL the page (and its workers) asks for from now on, whether or not it is answered. */
export function recordRequestedUrls(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  return urls;
}

/** Whether a URL targets this machine (127.0.0.0/8, ::1, localhost) or is browser-internal. */
export function isLoopbackUrl(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'data:' || protocol === 'blob:' || protocol === 'about:') return true;
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d+){3}$/.test(hostname);
}

/** Milliseconds from navigation start to the end of DOMContentLoaded of the page's current document. */
export async function domContentLoadedMs(page: Page): Promise<number> {
  return page.evaluate(() => {
    const [entry] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
    return entry ? entry.domContentLoadedEventEnd - entry.startTime : Number.NaN;
  });
}
