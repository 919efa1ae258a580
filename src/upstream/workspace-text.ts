/**
 * What both adapters do with the text they read from a workspace, so a file or a diff reads the same
 * whichever API answered: telling text from binary content, cutting text at the gateway's cap on a
 * whole character, and scrubbing secrets (workspace-secrets.ts) before anything is answered.
 *
 * Binary is decided as the two upstreams decide it where they do: content that is not valid UTF-8 (the
 * agent server's diff and V0's read fail on it) or that holds a NUL byte (the first test of
 * `binaryornot`, which V0's read uses). Only the bytes read are judged: a file whose first bytes are
 * text is read as text up to the cap.
 */
import { isUtf8 } from 'node:buffer';
import type { WorkspaceFileContent, WorkspaceFileDiff } from './port/workspace.ts';
import { scrubWorkspaceText } from './workspace-secrets.ts';

/**
 * Bytes read past the cap, so that a secret standing across it is seen whole by the scrubber before
 * the text is cut (the cut would otherwise leave its first characters unrecognised).
 */
export const SCRUB_MARGIN_BYTES = 512;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

/** `text` cut to at most `maxBytes` bytes of UTF-8, on a whole character. */
export function capText(text: string, maxBytes: number): { text: string; truncated: boolean } {
  // Most texts are short: their UTF-16 length bounds their UTF-8 length from below, 3x from above.
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  // encodeInto writes whole characters only, and says how much of `text` it took.
  const { read } = encoder.encodeInto(text, new Uint8Array(Math.max(0, maxBytes)));
  return read >= text.length ? { text, truncated: false } : { text: text.slice(0, read), truncated: true };
}

/** Whether a decoded text is no text after all (it holds a NUL). */
export function isBinaryText(text: string): boolean {
  return text.includes('\u0000');
}

/**
 * The text of a file's bytes, or null when they are binary. With `complete` false the bytes are the
 * first part of a longer file: a character cut at their end is left out before they are judged.
 */
export function decodeFileBytes(bytes: Uint8Array, complete: boolean): string | null {
  const whole = complete ? bytes : bytes.subarray(0, wholeCharacterEnd(bytes));
  if (!isUtf8(whole)) return null;
  const text = decoder.decode(whole);
  return isBinaryText(text) ? null : text;
}

/** Where the last whole UTF-8 character of `bytes` ends (a lead byte whose sequence is cut starts the tail). */
function wholeCharacterEnd(bytes: Uint8Array): number {
  for (let at = bytes.length - 1; at >= Math.max(0, bytes.length - 4); at--) {
    const byte = bytes[at] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return at + length > bytes.length ? at : bytes.length;
  }
  return bytes.length;
}

/**
 * A file read as text, scrubbed, then cut at `maxBytes`. `longer`: the upstream has more of the file
 * than `text` (it was read only so far), so the answer is truncated whatever the cut did.
 */
export function textFileContent(
  path: string,
  text: string,
  options: { maxBytes: number; size: number | null; longer: boolean },
): WorkspaceFileContent {
  const capped = capText(scrubWorkspaceText(text), options.maxBytes);
  return {
    path,
    size: options.size,
    binary: false,
    text: capped.text,
    truncated: options.longer || capped.truncated,
  };
}

/** A file that is not text: no text is answered. */
export function binaryFileContent(path: string, size: number | null): WorkspaceFileContent {
  return { path, size, binary: true, text: null, truncated: false };
}

/**
 * A diff as the port answers it: both sides scrubbed, or no texts at all when either side is binary or
 * the upstream refused the file for its size.
 */
export function fileDiff(
  path: string,
  original: string | null,
  modified: string | null,
  flags: { binary?: boolean; tooLarge?: boolean } = {},
): WorkspaceFileDiff {
  const binary =
    flags.binary === true ||
    (original !== null && isBinaryText(original)) ||
    (modified !== null && isBinaryText(modified));
  const tooLarge = flags.tooLarge === true;
  if (binary || tooLarge) return { path, original: null, modified: null, binary, tooLarge };
  return {
    path,
    original: original === null ? null : scrubWorkspaceText(original),
    modified: modified === null ? null : scrubWorkspaceText(modified),
    binary: false,
    tooLarge: false,
  };
}
