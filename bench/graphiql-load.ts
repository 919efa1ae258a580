/**
 * `npx tsx bench/graphiql-load.ts [--runs 5] [--url http://127.0.0.1:PORT/graphql]`: what opening
 * GraphiQL costs a browser.
 *
 * Starts the local service and the gateway in this process (port 0, temp data dir), or uses the
 * gateway at `--url` (to measure another build, e.g. an older checkout). Each run launches Debian's
 * chromium on a fresh profile (every non-loopback request refused), opens `/graphql` through a
 * recording proxy, waits for the editor and a quiet network, then reloads. Prints per run and as
 * medians the requests and bytes on the wire of the first load and of the reload, split into the
 * static page and assets versus GraphiQL's introspection query, and DOMContentLoaded. Not a test:
 * it prints figures and asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { startGateway } from '../src/gateway/server.ts';
import { startLocalService } from '../src/local-service/index.ts';
import {
  chromiumInstalled,
  domContentLoadedMs,
  type Exchange,
  launchChromium,
  startRecordingProxy,
  totalBytes,
} from '../test/helpers/browser.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, url: { type: 'string' } },
});
const runs = Number(values.runs);
if (!chromiumInstalled()) {
  console.error('chromium is missing: apt-get install -y chromium');
  process.exit(1);
}

const cleanups: Array<() => Promise<void> | void> = [];
let gatewayUrl = values.url;
if (!gatewayUrl) {
  const dataDir = mkdtempSync(join(tmpdir(), 'graphiql-load-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const logger = pino({ level: 'silent' });
  const service = await startLocalService({ port: 0, host: '127.0.0.1', dataDir, logger });
  cleanups.push(() => service.close());
  const gateway = await startGateway({ port: 0, host: '127.0.0.1', upstreamUrl: service.url, logger });
  cleanups.push(() => gateway.close());
  gatewayUrl = gateway.url;
}
const proxy = await startRecordingProxy(gatewayUrl);
cleanups.push(() => proxy.close());

interface Load {
  exchanges: Exchange[];
  staticBytes: number;
  operationBytes: number;
  domContentLoadedMs: number;
}

const isOperation = (exchange: Exchange) => exchange.method === 'POST';

async function settle(page: Page): Promise<Load> {
  // A reload restores GraphiQL's tabs from localStorage and opens an empty one: wait for the editor.
  await page.locator('.graphiql-query-editor .monaco-editor').first().waitFor({ timeout: 60_000 });
  await page.locator('.graphiql-execute-button').waitFor();
  const exchanges = await proxy.take();
  return {
    exchanges,
    staticBytes: totalBytes(exchanges.filter((exchange) => !isOperation(exchange))),
    operationBytes: totalBytes(exchanges.filter(isOperation)),
    domContentLoadedMs: Math.round(await domContentLoadedMs(page)),
  };
}

const results: Array<{ first: Load; reload: Load }> = [];
try {
  for (let run = 0; run < runs; run++) {
    const browser = await launchChromium();
    try {
      await browser.page.goto(proxy.url);
      const first = await settle(browser.page);
      await browser.page.reload();
      const reload = await settle(browser.page);
      results.push({ first, reload });
    } finally {
      await browser.close();
    }
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}

const describe = (load: Load) =>
  `${load.exchanges.length} requests, ${load.staticBytes} B page+assets + ${load.operationBytes} B ` +
  `introspection, DOMContentLoaded ${load.domContentLoadedMs} ms`;
for (const [index, { first, reload }] of results.entries()) {
  console.log(`run ${index + 1}: first load ${describe(first)}; reload ${describe(reload)}`);
}
const last = results.at(-1);
if (last) {
  console.log('\nexchanges of the last run (method path status bytes-on-wire content-encoding):');
  for (const [label, load] of [
    ['first load', last.first],
    ['reload', last.reload],
  ] as const) {
    console.log(`  ${label}:`);
    for (const e of load.exchanges) {
      console.log(
        `    ${e.method} ${e.path.slice(0, 60)} ${e.status} ${e.bytes} ${e.contentEncoding || '-'}`,
      );
    }
  }
}
const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] ?? 0;
const pick = (phase: 'first' | 'reload', key: 'staticBytes' | 'operationBytes' | 'domContentLoadedMs') =>
  median(results.map((result) => result[phase][key]));
console.log(
  `\nmedian of ${results.length}: first load ${pick('first', 'staticBytes')} B page+assets ` +
    `(+${pick('first', 'operationBytes')} B introspection), DOMContentLoaded ${pick('first', 'domContentLoadedMs')} ms; ` +
    `reload ${pick('reload', 'staticBytes')} B page+assets (+${pick('reload', 'operationBytes')} B introspection), ` +
    `DOMContentLoaded ${pick('reload', 'domContentLoadedMs')} ms`,
);
