/**
 * V0's workspace zip without the repositories' `.git` folders. 0.53's `zip-directory` zips everything
 * under `/workspace`, `.git` included, and a clone's `.git/config` holds the git provider token in its
 * remote URL (both APIs clone that way), so the zip as 0.53 sends it would hand the token to whoever
 * opens the archive link. This filter drops every entry inside a `.git` folder while the zip streams:
 * entries pass through (their bytes unread) or are skipped by the sizes their local headers give, and
 * the central directory at the end is rewritten with the entries kept and their new offsets.
 *
 * 0.53 writes the zip with Python's `zipfile` into a file before sending it, so local headers carry the
 * sizes (no data descriptors) and archives below 4 GiB and 65,535 entries use no ZIP64 records. A zip
 * this filter cannot rewrite faithfully (data descriptors, ZIP64 end records) fails the stream rather
 * than passing `.git` on.
 */
import { insideGitFolder } from '../workspace-path.ts';

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL = 0x06054b50;
const ZIP64_END = 0x06064b50;
const HAS_DATA_DESCRIPTOR = 0x08;

function unsupported(why: string): Error {
  return new Error(`The workspace zip cannot be filtered (${why}); it is not passed on.`);
}

/** A web TransformStream that removes `.git` entries from a zip as it streams. */
export function zipWithoutGit(): TransformStream<Uint8Array, Uint8Array> {
  let pending: Uint8Array = new Uint8Array(0);
  /** Bytes of the current entry's data still to pass (`pass`) or to drop (`skip`). */
  let mode: 'header' | 'pass' | 'skip' | 'central' = 'header';
  let remaining = 0;
  /** Offset in the input, and in the output, of the next byte. */
  let readOffset = 0;
  let writtenOffset = 0;
  /** Kept entries: input offset of their local header -> output offset. */
  const moved = new Map<number, number>();
  const central: Uint8Array[] = [];

  const take = (count: number): Uint8Array => {
    const taken = pending.subarray(0, count);
    pending = pending.subarray(count);
    readOffset += count;
    return taken;
  };

  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      pending = pending.length === 0 ? chunk : concat(pending, chunk);
      for (;;) {
        if (mode === 'central') {
          central.push(take(pending.length));
          return;
        }
        if (mode === 'pass' || mode === 'skip') {
          const count = Math.min(remaining, pending.length);
          const part = take(count);
          remaining -= count;
          if (mode === 'pass') {
            controller.enqueue(part);
            writtenOffset += count;
          }
          if (remaining > 0) return;
          mode = 'header';
        }
        if (pending.length < 4) return;
        const view = new DataView(pending.buffer, pending.byteOffset, pending.byteLength);
        const signature = view.getUint32(0, true);
        if (signature !== LOCAL_HEADER) {
          if (signature !== CENTRAL_HEADER && signature !== END_OF_CENTRAL)
            throw unsupported('an unknown record');
          mode = 'central';
          continue;
        }
        if (pending.length < 30) return;
        const flags = view.getUint16(6, true);
        const size = view.getUint32(18, true);
        const nameLength = view.getUint16(26, true);
        const extraLength = view.getUint16(28, true);
        if (flags & HAS_DATA_DESCRIPTOR) throw unsupported('an entry with a data descriptor');
        if (size === 0xffffffff) throw unsupported('a ZIP64 entry');
        const headerLength = 30 + nameLength + extraLength;
        if (pending.length < headerLength) return;
        const name = new TextDecoder().decode(pending.subarray(30, 30 + nameLength));
        const start = readOffset;
        const header = take(headerLength);
        remaining = size;
        if (insideGitFolder(name)) {
          mode = 'skip';
        } else {
          moved.set(start, writtenOffset);
          controller.enqueue(header.slice());
          writtenOffset += headerLength;
          mode = 'pass';
        }
      }
    },
    flush(controller) {
      if (mode !== 'central') throw unsupported('it ends before its central directory');
      controller.enqueue(rewriteCentral(concat(...central), moved, writtenOffset));
    },
  });
}

/** The central directory and end record with only the kept entries, at their new offsets. */
function rewriteCentral(
  input: Uint8Array,
  moved: ReadonlyMap<number, number>,
  centralOffset: number,
): Uint8Array {
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const kept: Uint8Array[] = [];
  let at = 0;
  let entries = 0;
  while (at + 4 <= input.length && view.getUint32(at, true) === CENTRAL_HEADER) {
    const length =
      46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    const localOffset = view.getUint32(at + 42, true);
    if (localOffset === 0xffffffff) throw unsupported('a ZIP64 offset');
    const newOffset = moved.get(localOffset);
    if (newOffset !== undefined) {
      const entry = input.slice(at, at + length);
      new DataView(entry.buffer).setUint32(42, newOffset, true);
      kept.push(entry);
      entries += 1;
    }
    at += length;
  }
  if (at + 4 <= input.length && view.getUint32(at, true) === ZIP64_END)
    throw unsupported('a ZIP64 end record');
  if (at + 22 > input.length || view.getUint32(at, true) !== END_OF_CENTRAL) {
    throw unsupported('no end of central directory');
  }
  const end = input.slice(at);
  const endView = new DataView(end.buffer);
  const centralSize = kept.reduce((sum, entry) => sum + entry.length, 0);
  endView.setUint16(8, entries, true);
  endView.setUint16(10, entries, true);
  endView.setUint32(12, centralSize, true);
  endView.setUint32(16, centralOffset, true);
  return concat(...kept, end);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
