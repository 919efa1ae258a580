/**
 * base64url (no padding) of a text's UTF-8 bytes, through one reused buffer: the cursors (event
 * cursors, conversation page cursors) are minted for every edge of every page and every live event,
 * and a new Buffer per cursor was most of their cost.
 */

/** Reused by every call (each use is synchronous, start to end). */
const buffer = Buffer.allocUnsafe(4096);
/** Writes into {@link buffer} with less per-call work than `Buffer#write`. */
const utf8 = new TextEncoder();

/** `Buffer.from(text, 'utf8').toString('base64url')`, byte for byte. */
export function base64urlOfText(text: string): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes; a longer text (an odd upstream id, a crafted token)
  // takes its own buffer.
  if (text.length * 3 > buffer.length) return Buffer.from(text, 'utf8').toString('base64url');
  return buffer.toString('base64url', 0, utf8.encodeInto(text, buffer).written);
}
