/**
 * V0's `zip-directory` archive: every regular file under the workspace (`os.walk` order: a folder's
 * files, then its sub-folders; `.git` and everything else included, no excludes), as Python's
 * `ZipFile(path, 'w')` writes it: stored entries (no compression), names relative to `/workspace`,
 * modification times in local DOS time (OpenHands 0.53 `openhands/runtime/action_execution_server.py`,
 * `download_files`). Written here with `node:zlib`'s crc32 rather than a zip library: stored entries are
 * three small records each. Symlinks are left out, so nothing outside the workspace is read.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

interface ZipEntry {
  name: string;
  data: Buffer;
  mtime: Date;
  mode: number;
}

/** Every regular file under `dir`, in `os.walk` order (names sorted, which the real walk does not promise). */
function walk(dir: string, prefix: string, out: ZipEntry[]): void {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  const folders: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) folders.push(entry.name);
    else if (entry.isFile()) {
      const stat = lstatSync(path);
      out.push({
        name: `${prefix}${entry.name}`,
        data: readFileSync(path),
        mtime: stat.mtime,
        mode: stat.mode,
      });
    }
  }
  for (const folder of folders) walk(join(dir, folder), `${prefix}${folder}/`, out);
}

/** A date as DOS time and date words (local time, two-second steps, 1980 at the earliest). */
function dosDateTime(date: Date): { time: number; day: number } {
  const year = Math.max(1980, date.getFullYear());
  return {
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1),
    day: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

/** The zip of every file under `root` (a workspace folder). */
export function zipWorkspace(root: string): Buffer {
  const entries: ZipEntry[] = [];
  walk(root, '', entries);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    // Bit 11: the name is UTF-8 (Python sets it for names that are not ASCII).
    const flags = /^[\x20-\x7e]*$/.test(entry.name) ? 0 : 0x0800;
    const { time, day } = dosDateTime(entry.mtime);
    const crc = crc32(entry.data);
    // The fields both headers share, from "version needed" to the name's length (stored: sizes equal).
    const shared = Buffer.alloc(26);
    shared.writeUInt16LE(20, 0);
    shared.writeUInt16LE(flags, 2);
    shared.writeUInt16LE(time, 6);
    shared.writeUInt16LE(day, 8);
    shared.writeUInt32LE(crc, 10);
    shared.writeUInt32LE(entry.data.length, 14);
    shared.writeUInt32LE(entry.data.length, 18);
    shared.writeUInt16LE(name.length, 22);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    shared.copy(local, 4, 0, 24);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    shared.copy(central, 6, 0, 24);
    // Extra field, comment, disk number and internal attributes stay 0.
    central.writeUInt32LE(((entry.mode & 0xffff) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    centrals.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
