/**
 * The archive links' route (src/gateway/workspace/archive-route.ts) through a real gateway in front of
 * a scripted 0.53 (test/helpers/workspace-double.ts), for what the bundled service never does: an
 * archive that arrives slowly (downloads hold their per-credential slot while they stream), one cut
 * midway (the client's download fails, no hang, nothing left held), an upstream 500 or a stopped
 * runtime before the first byte (coded JSON, never the upstream's body). Links are sealed with the
 * gateway's own key, as `Workspace.archive` seals them.
 */
import { describe, expect, it, vi } from 'vitest';
import { ArchiveLinks } from '../../src/gateway/workspace/archive-links.ts';
import { readZip, zipOf } from '../helpers/archives.ts';
import { conversationRecord } from '../helpers/fixtures.ts';
import { gatewayForTest } from '../helpers/gateway.ts';
import { type WorkspaceDouble, workspaceDoubleForTest } from '../helpers/workspace-double.ts';

const ID = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const BASE = `/api/conversations/${ID}`;
const LINK_KEY = 'a-link-key-for-tests-only-0123456789';
const CALLER = { kind: 'session-api-key', key: 'caller-key-archive-1' } as const;
/** A real zip as 0.53 sends one, big enough to come in three pieces. */
const ZIP = zipOf({ 'one.txt': 'one '.repeat(100), 'two.txt': 'two '.repeat(100) });
const PIECES = [ZIP.subarray(0, 120), ZIP.subarray(120, 600), ZIP.subarray(600)];

async function gatewayOver(up: WorkspaceDouble, archivesPerCredential = 2) {
  up.on('GET', BASE, { json: conversationRecord(ID, { status: 'RUNNING' }) });
  const gateway = await gatewayForTest({
    upstreamUrl: up.url,
    upstream: { retries: 0 },
    workspace: { linkKey: LINK_KEY, archivesPerCredential },
  });
  const links = new ArchiveLinks(LINK_KEY, 60);
  const link = () => new URL(`/workspace-archive/${links.seal(ID, CALLER).token}`, gateway.url).toString();
  return { gateway, link };
}

describe('the archive route against a scripted upstream', () => {
  it('holds a slot per download while it streams: the third of one credential waits (429), a freed slot serves again', async () => {
    const up = await workspaceDoubleForTest();
    up.on('GET', `${BASE}/zip-directory`, {
      chunks: PIECES,
      intervalMs: 2_000,
      headers: { 'content-type': 'application/zip' },
    });
    const { link } = await gatewayOver(up);
    const first = await fetch(link());
    const second = await fetch(link());
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('content-disposition')).toBe('attachment; filename="workspace.zip"');
    const third = await fetch(link());
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(await third.json()).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    await first.body?.cancel();
    await vi.waitFor(
      async () => {
        const again = await fetch(link());
        await again.body?.cancel();
        expect(again.status).toBe(200);
      },
      { timeout: 5_000, interval: 100 },
    );
    await second.body?.cancel();
  });

  it('fails a download whose upstream archive is cut midway, and frees its slot', async () => {
    const up = await workspaceDoubleForTest();
    up.on('GET', `${BASE}/zip-directory`, {
      chunks: PIECES,
      intervalMs: 30,
      cutAfter: 1,
      headers: { 'content-type': 'application/zip' },
    });
    const { link } = await gatewayOver(up, 1);
    // The download fails, before or after its headers depending on when the cut reaches the gateway.
    await expect(fetch(link()).then((response) => response.arrayBuffer())).rejects.toThrow();
    // The one slot of this credential is free again.
    up.on('GET', `${BASE}/zip-directory`, { bytes: ZIP, headers: { 'content-type': 'application/zip' } });
    await vi.waitFor(async () => {
      const next = await fetch(link());
      expect(next.status).toBe(200);
      expect(readZip(Buffer.from(await next.arrayBuffer())).map((entry) => entry.name)).toEqual([
        'one.txt',
        'two.txt',
      ]);
    });
  });

  it('answers a failure before the first byte as coded JSON, never the upstream body', async () => {
    const up = await workspaceDoubleForTest();
    up.on('GET', `${BASE}/zip-directory`, { status: 500, text: 'Traceback: secret-internals' });
    const { link } = await gatewayOver(up);
    const failed = await fetch(link());
    expect(failed.status).toBe(502);
    const body = await failed.text();
    expect(JSON.parse(body)).toMatchObject({ errors: [{ extensions: { code: 'UPSTREAM_ERROR' } }] });
    expect(body).not.toContain('secret-internals');

    up.on('GET', BASE, { json: conversationRecord(ID, { status: 'STOPPED' }) });
    const stopped = await fetch(link());
    expect(stopped.status).toBe(409);
    expect(await stopped.json()).toMatchObject({
      errors: [{ extensions: { code: 'WORKSPACE_NOT_RUNNING' } }],
    });
    expect(up.requests.filter((request) => request.path.endsWith('/zip-directory'))).toHaveLength(1);
  });
});
