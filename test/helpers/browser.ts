/**
 * Debian's chromium driven by playwright-core, for the GraphiQL browser test and its measurement
 * script (bench/graphiql-load.ts): launch with the flags of ../shared/reference/toolchain-notes.md,
 * every non-loopback request refused, and a meter of the bytes each page load transferred.
 *
 *   await using browser = await launchChromium();
 *   const page = await browser.newPage();
 *   const meter = await meterTransfers(page);
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

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

/** A launched browser; closing it ends the chromium process. */
export interface TestBrowser {
  browser: Browser;
  /** A fresh page in a fresh context (its own HTTP cache). */
  newPage(): Promise<Page>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Launches chromium with every non-loopback request refused by the browser itself.
 *
 * Why a proxy and not `page.route`: Playwright turns the HTTP cache off as soon as any route is
 * registered (microsoft/playwright#7220), and a reload served from the cache is what the GraphiQL test
 * measures. Chromium bypasses proxies for loopback addresses by default, so the gateway on 127.0.0.1
 * is reached directly and anything else goes to a dead port. Tests still record every URL a page
 * asked for ({@link meterTransfers}) and assert that none left loopback.
 */
export async function launchChromium(): Promise<TestBrowser> {
  const browser = await chromium.launch({
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
  const close = () => browser.close();
  return {
    browser,
    async newPage() {
      const context = await browser.newContext();
      return context.newPage();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** One network request of a page, as the DevTools network panel shows it. */
export interface Transfer {
  url: string;
  /** HTTP status; 0 when the request failed. */
  status: number;
  /** Bytes received over the wire (headers + encoded body); 0 when served from the browser cache. */
  transferredBytes: number;
  /** Decoded body bytes. */
  bodyBytes: number;
  fromCache: boolean;
  /** `content-encoding` of the answer, or '' for none. */
  contentEncoding: string;
  /** Set when the request failed (`net::ERR_...`). */
  failure?: string;
}

/** Records the page's requests from now on; {@link TransferMeter.take} returns and clears them. */
export interface TransferMeter {
  /**
   * Waits until the network has been quiet for `quietMs` (no request open, none started; open event
   * streams do not count) or `timeoutMs` passed, then returns the finished requests and starts a new
   * list.
   */
  take(options?: { quietMs?: number; timeoutMs?: number }): Promise<Transfer[]>;
}

/**
 * Meters a page's network traffic through the DevTools protocol: `encodedDataLength` of
 * `Network.loadingFinished` is the "transferred" column of DevTools (0 for cache hits), and requests of
 * dedicated workers are included because Chromium attributes a worker's script fetch to its page.
 */
export async function meterTransfers(page: Page): Promise<TransferMeter> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const open = new Map<string, Transfer & { stream: boolean }>();
  let done: Transfer[] = [];
  let lastActivity = Date.now();
  const finish = (requestId: string, update: Partial<Transfer>) => {
    const entry = open.get(requestId);
    if (!entry) return;
    open.delete(requestId);
    const { stream: _stream, ...transfer } = entry;
    done.push({ ...transfer, ...update });
    lastActivity = Date.now();
  };
  cdp.on('Network.requestWillBeSent', (event) => {
    // data: and blob: URLs (inline fonts, worker blobs) never touch the network.
    if (!event.request.url.startsWith('http')) return;
    lastActivity = Date.now();
    // A redirect reuses the id; the earlier hop is finished by then.
    const accept = Object.entries(event.request.headers).find(([name]) => name.toLowerCase() === 'accept');
    open.set(event.requestId, {
      url: event.request.url,
      status: 0,
      transferredBytes: 0,
      bodyBytes: 0,
      fromCache: false,
      contentEncoding: '',
      stream: String(accept?.[1] ?? '').includes('text/event-stream'),
    });
  });
  cdp.on('Network.requestServedFromCache', (event) => {
    const transfer = open.get(event.requestId);
    if (transfer) transfer.fromCache = true;
  });
  cdp.on('Network.responseReceived', (event) => {
    const transfer = open.get(event.requestId);
    if (!transfer) return;
    transfer.status = event.response.status;
    transfer.fromCache ||= event.response.fromDiskCache === true;
    const encoding = Object.entries(event.response.headers).find(
      ([name]) => name.toLowerCase() === 'content-encoding',
    );
    transfer.contentEncoding = String(encoding?.[1] ?? '');
  });
  cdp.on('Network.dataReceived', (event) => {
    const transfer = open.get(event.requestId);
    if (transfer) transfer.bodyBytes += event.dataLength;
  });
  cdp.on('Network.loadingFinished', (event) => {
    finish(event.requestId, { transferredBytes: event.encodedDataLength });
  });
  cdp.on('Network.loadingFailed', (event) => {
    finish(event.requestId, { failure: event.errorText });
  });
  return {
    async take({ quietMs = 500, timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      const busy = () =>
        [...open.values()].some((transfer) => !transfer.stream) || Date.now() - lastActivity < quietMs;
      while (busy() && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const taken = done;
      done = [];
      return taken;
    },
  };
}

/** Sum of the transferred bytes. */
export function totalTransferred(transfers: readonly Transfer[]): number {
  return transfers.reduce((sum, transfer) => sum + transfer.transferredBytes, 0);
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
