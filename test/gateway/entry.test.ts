import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tryUpgrade } from '../helpers/graphql-ws.ts';
import { httpRequest } from '../helpers/http.ts';
import { spawnLocalServiceCli, tempDataDirForTest } from '../helpers/local-service.ts';
import { killAfterTest, spawnTypeScript } from '../helpers/processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** The gateway's URL once the process prints it. */
async function gatewayUrlOf(proc: ReturnType<typeof run>): Promise<string> {
  let gatewayUrl: string | undefined;
  for (let i = 0; i < 300 && !gatewayUrl; i++) {
    gatewayUrl = /gateway: (http:\/\/\S+\/graphql)/.exec(proc.output().stdout)?.[1];
    if (!gatewayUrl) await new Promise((done) => setTimeout(done, 50));
  }
  if (!gatewayUrl) throw new Error(`no gateway address printed: ${JSON.stringify(proc.output())}`);
  return gatewayUrl;
}

/** Creates a conversation through the graph, then waits until the list shows it; answers its id. */
async function createAndList(gatewayUrl: string): Promise<string> {
  const post = async (query: string) =>
    (await (
      await fetch(gatewayUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      })
    ).json()) as {
      data: Record<string, { conversationId?: string; edges?: Array<{ node: { conversationId: string } }> }>;
    };
  const created = await post(
    'mutation { createConversation(input: {}) { ... on CreateConversationPayload { conversationId } } }',
  );
  const id = created.data.createConversation?.conversationId as string;
  expect(id).toMatch(/^[0-9a-f]{32}$/);
  await expect
    .poll(
      async () =>
        (
          await post('{ conversations(first: 5) { edges { node { conversationId } } } }')
        ).data.conversations?.edges?.map((edge) => edge.node.conversationId),
      { timeout: 10_000, interval: 50 },
    )
    .toContain(id);
  return id;
}

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
    const gatewayUrl = await gatewayUrlOf(proc);
    expect(proc.output().stdout).toMatch(/local conversation service: http:\/\/127\.0\.0\.1:\d+/);
    const response = await fetch(gatewayUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { createConversation(input: {}) { __typename } }' }),
    });
    expect(await response.json()).toEqual({
      data: { createConversation: { __typename: 'CreateConversationPayload' } },
    });
    // DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 is same-origin with the
    // gateway, and the embedded service needs no key. Its requests carry its own name in Host and Origin.
    const port = new URL(gatewayUrl).port;
    const rebound = { host: `evil.example:${port}`, origin: `http://evil.example:${port}` };
    const refused = await httpRequest(gatewayUrl, {
      method: 'POST',
      headers: { ...rebound, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ conversations(first: 1) { edges { node { id } } } }' }),
    });
    expect({ status: refused.status, code: JSON.parse(refused.text).errors[0].extensions.code }).toEqual({
      status: 403,
      code: 'HOST_REJECTED',
    });
    expect((await tryUpgrade(gatewayUrl, rebound)).status).toBe(403);
    proc.child.kill('SIGTERM');
    expect(await proc.exit).toBe(0);
  }, 30_000);

  it('in front of a V1 service with the default --upstream-api auto: finds V1, says so, serves the graph', async () => {
    const service = await spawnLocalServiceCli(tempDataDirForTest('gateway-entry-v1-'), ['--api', 'v1']);
    const proc = run(['--port', '0', '--upstream', service.url], { LOG_LEVEL: 'info', PORT: '1' });
    const gatewayUrl = await gatewayUrlOf(proc);
    const ready = await fetch(new URL('/ready', gatewayUrl));
    expect({ status: ready.status, api: ready.headers.get('x-upstream-api') }).toEqual({
      status: 200,
      api: 'v1',
    });
    await createAndList(gatewayUrl);
    expect(proc.output().stdout).toContain('upstream API: v1 (detected)');
    proc.child.kill('SIGTERM');
    expect(await proc.exit).toBe(0);
  }, 60_000);

  it('with --local-service-api v1: the embedded service speaks V1 and the gateway follows', async () => {
    const dataDir = tempDataDirForTest('gateway-entry-embedded-v1-');
    const proc = run(['--port', '0', '--local-service-api', 'v1'], {
      DATA_DIR: dataDir,
      LOCAL_SERVICE_PORT: '0',
      PORT: '1',
    });
    const gatewayUrl = await gatewayUrlOf(proc);
    expect((await fetch(new URL('/ready', gatewayUrl))).headers.get('x-upstream-api')).toBe('v1');
    await createAndList(gatewayUrl);
    proc.child.kill('SIGTERM');
    expect(await proc.exit).toBe(0);
  }, 60_000);

  it('stops with a message naming a bad setting', async () => {
    const proc = run(['--port', 'eighty'], {});
    expect(await proc.exit).toBe(2);
    expect(proc.output().stderr).toContain('Invalid --port');
  }, 30_000);
});
