/**
 * Several `npm start` at once from one checkout (two terminals, or replicas started from one folder)
 * on a fresh build: each finds the bundle missing, builds it and imports it. A start that imported
 * the bundle while another was still writing it died with `SyntaxError: Invalid or unexpected token`;
 * the build now writes each file under a temporary name and renames it into place, so a reader sees
 * the old bundle or the new one, never half of one.
 *
 * It also checks that the bundle serves GraphiQL, whose own bundle the build leaves in node_modules.
 *
 * The checkout is a temporary folder holding a copy of scripts/ and package.json and links to src/ and
 * node_modules/, so its dist/ starts empty without touching the repository's own bundle.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDirForTest } from '../helpers/local-service.ts';
import { killAfterTest } from '../helpers/processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const STARTS = 4;

/** A checkout without dist/: scripts/ and package.json copied, src/ and node_modules/ linked. */
function freshCheckout(): string {
  const checkout = tempDataDirForTest('gateway-checkout-');
  mkdirSync(checkout, { recursive: true });
  cpSync(join(ROOT, 'scripts'), join(checkout, 'scripts'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(checkout, 'package.json'));
  symlinkSync(join(ROOT, 'src'), join(checkout, 'src'), 'dir');
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  return checkout;
}

/** `npm start` (node scripts/start.mjs) in `checkout`; resolves with the gateway's URL or the output it died with. */
function start(checkout: string): Promise<{ url: string } | { exit: number | null; stderr: string }> {
  const child: ChildProcess = spawn(process.execPath, ['scripts/start.mjs', '--port', '0'], {
    cwd: checkout,
    env: {
      ...process.env,
      LOG_LEVEL: 'silent',
      DATA_DIR: tempDataDirForTest('gateway-start-'),
      LOCAL_SERVICE_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killAfterTest(child);
  let stdout = '';
  let stderr = '';
  return new Promise((done) => {
    child.stdout?.on('data', (chunk) => {
      stdout += String(chunk);
      const url = /gateway: (http:\/\/\S+\/graphql)/.exec(stdout)?.[1];
      if (url) done({ url });
    });
    child.stderr?.on('data', (chunk) => {
      stderr += String(chunk);
    });
    child.once('exit', (exit) => done({ exit, stderr }));
  });
}

describe('npm start, several at once on a fresh build', () => {
  it('every start serves the gateway: none imports a half-written bundle', async () => {
    const checkout = freshCheckout();
    expect(existsSync(join(checkout, 'dist'))).toBe(false);
    const started = await Promise.all(Array.from({ length: STARTS }, () => start(checkout)));
    const answers = await Promise.all(
      started.map(async (outcome) => {
        if (!('url' in outcome)) return outcome;
        const response = await fetch(outcome.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ __typename }' }),
        });
        return response.json();
      }),
    );
    expect(answers).toEqual(Array.from({ length: STARTS }, () => ({ data: { __typename: 'Query' } })));

    // GraphiQL's bundle stays outside dist/index.js (scripts/build.mjs): the bundle loads it from
    // node_modules when a browser first asks, and serves its script.
    const url = (started[0] as { url: string }).url;
    const page = await (await fetch(url, { headers: { accept: 'text/html' } })).text();
    const script = /"(\/graphiql\/assets\/graphiql\.[0-9a-f]{16}\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(new URL(script as string, url));
    expect({ status: asset.status, type: asset.headers.get('content-type') }).toEqual({
      status: 200,
      type: 'text/javascript; charset=utf-8',
    });
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  }, 60_000);
});
