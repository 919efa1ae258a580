/**
 * `npx tsx bench/graphiql-load.ts [--runs 3]`: what opening GraphiQL costs a browser.
 *
 * Starts the local service and the gateway in this process (port 0, temp data dir), opens
 * `/graphql` in Debian's chromium (every non-loopback request refused) in a fresh context, waits
 * until the editor is up and the network is idle, then reloads. Prints, per run and as medians, the
 * requests and bytes transferred by the first load and by the reload, and DOMContentLoaded. Not a
 * test: it prints figures, it asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { startGateway } from '../src/gateway/server.ts';
import { startLocalService } from '../src/local-service/index.ts';
import {
  chromiumInstalled,
  domContentLoadedMs,
  launchChromium,
  meterTransfers,
  type Transfer,
  totalTransferred,
} from '../test/helpers/browser.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
if (!chromiumInstalled()) {
  console.error('chromium is missing: apt-get install -y chromium');
  process.exit(1);
}

const dataDir = mkdtempSync(join(tmpdir(), 'graphiql-load-'));
const logger = pino({ level: 'silent' });
const service = await startLocalService({ port: 0, host: '127.0.0.1', dataDir, logger });
const gateway = await startGateway({ port: 0, host: '127.0.0.1', upstreamUrl: service.url, logger });
const browser = await launchChromium();

interface Load {
  requests: number;
  transferred: number;
  body: number;
  domContentLoadedMs: number;
  detail: Transfer[];
}

async function settle(page: Awaited<ReturnType<typeof browser.newPage>>): Promise<void> {
  // A reload restores GraphiQL's tabs from localStorage and opens an empty one: wait for the editor.
  await page.locator('.graphiql-query-editor .monaco-editor').first().waitFor();
  await page.locator('.graphiql-execute-button').waitFor();
}

const results: Array<{ first: Load; reload: Load }> = [];
try {
  for (let run = 0; run < runs; run++) {
    const page = await browser.newPage();
    const meter = await meterTransfers(page);
    await page.goto(gateway.url);
    await settle(page);
    const firstDcl = await domContentLoadedMs(page);
    const first = await meter.take();
    await page.reload();
    await settle(page);
    const reloadDcl = await domContentLoadedMs(page);
    const reload = await meter.take();
    const summary = (detail: Transfer[], dcl: number): Load => ({
      requests: detail.length,
      transferred: totalTransferred(detail),
      body: detail.reduce((sum, t) => sum + t.bodyBytes, 0),
      domContentLoadedMs: Math.round(dcl),
      detail,
    });
    results.push({ first: summary(first, firstDcl), reload: summary(reload, reloadDcl) });
    await page.context().close();
  }
} finally {
  await browser.close();
  await gateway.close();
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}

const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] ?? 0;
for (const [index, { first, reload }] of results.entries()) {
  console.log(
    `run ${index + 1}: first load ${first.requests} requests ${first.transferred} B transferred ` +
      `(${first.body} B decoded), DOMContentLoaded ${first.domContentLoadedMs} ms; ` +
      `reload ${reload.requests} requests ${reload.transferred} B, DOMContentLoaded ${reload.domContentLoadedMs} ms`,
  );
}
const last = results.at(-1);
if (last) {
  console.log('\nrequests of the last run (url, status, transferred, decoded, encoding, cache):');
  for (const [label, load] of [
    ['first load', last.first],
    ['reload', last.reload],
  ] as const) {
    console.log(`  ${label}:`);
    for (const t of load.detail) {
      const path = t.url.startsWith('data:') ? `${t.url.slice(0, 30)}…` : new URL(t.url).pathname;
      console.log(
        `    ${path} ${t.status} ${t.transferredBytes} ${t.bodyBytes} ${t.contentEncoding || '-'}` +
          `${t.fromCache ? ' cache' : ''}${t.failure ? ` ${t.failure}` : ''}`,
      );
    }
  }
}
console.log(
  `\nmedian of ${results.length}: first load ${median(results.map((r) => r.first.transferred))} B, ` +
    `DOMContentLoaded ${median(results.map((r) => r.first.domContentLoadedMs))} ms; ` +
    `reload ${median(results.map((r) => r.reload.transferred))} B, ` +
    `DOMContentLoaded ${median(results.map((r) => r.reload.domContentLoadedMs))} ms`,
);
