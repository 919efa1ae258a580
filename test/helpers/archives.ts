/**
 * Readers of the archives the bundled service's workspace routes answer, written from the formats'
 * specifications rather than from the service's writers: a zip's central directory checked against
 * each local header and each entry's CRC-32, and a gzipped tar's members (PAX `path` records honoured).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { crc32, gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import { zipWorkspace } from '../../src/local-service/v0/workspace-zip.ts';

/** One zip entry. */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  data: Buffer;
}

/** The entries of a zip with stored entries, in central-directory order; fails on any inconsistency. */
export function readZip(zip: Buffer): ZipEntry[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  expect(end).toBeGreaterThanOrEqual(0);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    expect(zip.readUInt32LE(at)).toBe(0x02014b50);
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    expect(zip.readUInt32LE(local)).toBe(0x04034b50);
    expect(zip.subarray(local + 30, local + 30 + zip.readUInt16LE(local + 26)).toString('utf8')).toBe(name);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    if (method === 0) expect(crc32(data)).toBe(crc);
    entries.push({ name, method, data });
    at += 46 + skip;
  }
  return entries;
}

/** One tar member. */
export interface TarMember {
  name: string;
  /** `0` a file, `5` a folder. */
  type: string;
  data: Buffer;
}

/** The members of a .tar.gz (extended headers applied to the member they precede). */
export function readTarGz(archive: Buffer): TarMember[] {
  const tar = gunzipSync(archive);
  const members: TarMember[] = [];
  let longName: string | null = null;
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (from: number, length: number) =>
      header
        .subarray(from, from + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    const data = tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      longName = /\d+ path=(.*)\n/.exec(data.toString('utf8'))?.[1] ?? null;
      continue;
    }
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = null;
    members.push({ name, type, data });
  }
  return members;
}

/** What the system's `tar -tzf` lists for an archive (a second reader, independent of ours). */
export function tarList(archivePath: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile('tar', ['-tzf', archivePath], (error, stdout) => {
      if (error) reject(error);
      else resolve(stdout.split('\n').filter((line) => line !== ''));
    });
  });
}

/**
 * A zip as 0.53's `zip-directory` sends one (stored entries, sizes in the local headers), of `files`
 * (path -> text), made by the bundled service's own writer: for doubles that must answer a real zip.
 */
export function zipOf(files: Record<string, string>): Buffer {
  const root = mkdtempSync(join(tmpdir(), 'zip-of-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return zipWorkspace(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
