/**
 * V0's workspace zip loses its `.git` folders on the way through the gateway
 * (src/upstream/v0/zip-without-git.ts): a clone's `.git/config` holds the provider token. The zips are
 * the bundled service's own (`zipWorkspace`, stored entries like 0.53's), fed to the filter in chunks
 * cut at every kind of boundary; the result is checked by the archive reader the end-to-end suite
 * uses (central directory against each local header, each entry's CRC-32).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zipWorkspace } from '../../src/local-service/v0/workspace-zip.ts';
import { zipWithoutGit } from '../../src/upstream/v0/zip-without-git.ts';
import { readZip } from '../helpers/archives.ts';

const root = mkdtempSync(join(tmpdir(), 'zip-without-git-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FILES: Record<string, string> = {
  'README.md': '# readme\n',
  '.git/config': '[remote "origin"]\n\turl = https://ghp_abcdefghijklmnopqrstuvwx@github.com/o/r.git\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
  'src/app.py': 'print("hi")\n'.repeat(200),
  'repo/.git/config': 'url = https://x-access-token:glpat-123456789@gitlab.com/o/r.git\n',
  'repo/notes.md': 'notes\n',
  '.gitignore': 'node_modules\n',
  'empty.txt': '',
};
for (const [path, text] of Object.entries(FILES)) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** `bytes` through the filter, in chunks of `size` bytes. */
async function filtered(bytes: Buffer, size: number): Promise<Buffer> {
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.subarray(at, at + size));
      controller.close();
    },
  });
  return Buffer.from(await new Response(input.pipeThrough(zipWithoutGit())).arrayBuffer());
}

describe('a V0 workspace zip without .git', () => {
  const zip = zipWorkspace(root);

  it.each([1, 3, 7, 29, 46, 512, 100_000])(
    'keeps every other entry whole, fed %i bytes at a time',
    async (size) => {
      expect(readZip(zip).some((entry) => entry.name === '.git/config')).toBe(true);
      const entries = readZip(await filtered(zip, size));
      expect(entries.map((entry) => entry.name).sort()).toEqual([
        '.gitignore',
        'README.md',
        'empty.txt',
        'repo/notes.md',
        'src/app.py',
      ]);
      for (const entry of entries) expect(entry.data.toString()).toBe(FILES[entry.name]);
    },
  );

  it('fails rather than pass on what it cannot rewrite (a cut zip, an unknown record)', async () => {
    await expect(filtered(zip.subarray(0, zip.length - 30), 64)).rejects.toThrow(/cannot be filtered/);
    await expect(filtered(Buffer.from('not a zip at all'), 64)).rejects.toThrow(/cannot be filtered/);
  });
});
