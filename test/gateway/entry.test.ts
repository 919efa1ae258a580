import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tryUpgrade } from '../helpers/graphql-ws.ts';
import { httpRequest } from '../helpers/http.ts';
import { tempDataDirForTest } from '../helpers/local-service.ts';
import { killAfterTest, spawnTypeScript } from '../helpers/processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');

function run(args: string[], env: Record<string, string>) {
  const child = spawnTypeScript('src/index.ts', args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killAfterTest(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, exit, output: () => ({ stdout, stderr }) };
}

describe('npm start', () => {
  it('starts the embedded local service and the gateway, prints both, refuses a rebound Host, stops on SIGTERM', async () => {
    const dataDir = tempDataDirForTest('gateway-entry-');
    const proc = run(['--port', '0'], { DATA_DIR: dataDir, LOCAL_SERVICE_PORT: '0', PORT: '1' });
    let gatewayUrl: string | undefined;
    for (let i = 0; i < 300 && !gatewayUrl; i++) {
      gatewayUrl = /gateway: (http:\/\/\S+\/graphql)/.exec(proc.output().stdout)?.[1];
      if (!gatewayUrl) await new Promise((done) => setTimeout(done, 50));
    }
    expect(proc.output().stdout).toMatch(/local conversation service: http:\/\/127\.0\.0\.1:\d+/);
    expect(gatewayUrl).toBeDefined();
    const response = await fetch(gatewayUrl as string, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { createConversation(input: {}) { __typename } }' }),
    });
    expect(await response.json()).toEqual({
      data: { createConversation: { __typename: 'CreateConversationPayload' } },
    });
    // DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 is same-origin with the
    // gateway, and the embedded service needs no key. Its requests carry its own name in Host and Origin.
    const port = new URL(gatewayUrl as string).port;
    const rebound = { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
    const refused = await httpRequest(gatewayUrl as string, {
      method: 'POST',
      headers: { ...rebound, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ conversations(first: 1) { edges { node { id } } } }' }),
    });
    expect({ status: refused.status, code: JSON.parse(refused.text).errors[0].extensions.code }).toEqual({
      status: 403,
      code: 'HOST_REJECTED',
    });
    expect((await tryUpgrade(gatewayUrl as string, rebound)).status).toBe(403);
    proc.child.kill('SIGTERM');
    expect(await proc.exit).toBe(0);
  }, 30_000);

  it('stops with a message naming a bad setting', async () => {
    const proc = run(['--port', 'eighty'], {});
    expect(await proc.exit).toBe(2);
    expect(proc.output().stderr).toContain('Invalid --port');
  }, 30_000);
});
