/**
 * Reading a file through 0.53's `GET .../select-file?file=`, which answers the whole file as one JSON
 * string (`{"code": "<text>"}`) however large it is (docs/upstream-facts.md, "Workspace"). The answer
 * is streamed and read only until the gateway has its cap of text (plus a margin for the scrubber): the
 * prefix of the JSON string read so far is decoded on its own, so a file of any size costs the cap,
 * not the file.
 *
 * Binary files never come as text: 0.53 answers 415 for what `binaryornot` calls binary, and a 500
 * whose error says `could not be decoded as utf-8` for other non-UTF-8 files.
 */
import type { SelectFileRecord } from '../../contract/v0/workspace.ts';
import { UpstreamRejection, unexpectedAnswer } from '../failures.ts';
import type { WorkspacePath } from '../port/workspace.ts';
import { isBinaryText } from '../workspace-text.ts';
import { type V0WorkspaceTarget, v0WorkspaceRefusal, v0WorkspaceRequest } from './workspace-target.ts';

/** What select-file said of a file. */
export type SelectedFile =
  | { kind: 'text'; text: string; longer: boolean }
  | { kind: 'binary' }
  /** A 500 that is not about decoding: a missing file or a folder, or any other failure. */
  | { kind: 'failed'; error: Error };

/** `{"code":"` (any whitespace) before the string itself. */
const CODE_PREFIX = /^\s*\{\s*"code"\s*:\s*"/;

/**
 * Reads `path`'s text until `wantBytes` bytes of it are decoded or the answer ends.
 * @throws UpstreamError for transport failures; ConversationNotFoundError, WorkspaceNotRunningError
 */
export async function selectFile(
  target: V0WorkspaceTarget,
  path: WorkspacePath,
  wantBytes: number,
): Promise<SelectedFile> {
  let stream: Awaited<ReturnType<typeof target.scope.client.stream>>;
  try {
    stream = await target.scope.client.stream(
      v0WorkspaceRequest(target, 'GET', '/select-file', { file: path }),
      { deadline: 'body', accept: 'application/json' },
    );
  } catch (error) {
    if (!(error instanceof UpstreamRejection)) throw error;
    if (error.status === 415) return { kind: 'binary' };
    const message = (error.body as { error?: unknown } | null)?.error;
    if (
      error.status === 500 &&
      typeof message === 'string' &&
      /could not be decoded as utf-?8/i.test(message)
    ) {
      return { kind: 'binary' };
    }
    const refusal = v0WorkspaceRefusal(target, error);
    if (error.status === 500) return { kind: 'failed', error: refusal };
    throw refusal;
  }
  const reader = stream.body.getReader();
  try {
    const read = await readCode(reader, wantBytes);
    if (read.kind === 'text' && isBinaryText(read.text)) return { kind: 'binary' };
    return read;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** Reads the answer's `code` string as far as needed. */
async function readCode(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  wantBytes: number,
): Promise<Extract<SelectedFile, { kind: 'text' }>> {
  const decoder = new TextDecoder('utf-8');
  // JSON escapes take at most 6 characters for one: past this, no prefix can still be short.
  const maxRaw = wantBytes * 6 + 1024;
  let raw = '';
  let rawBytes = 0;
  let nextLook = wantBytes;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += decoder.decode(value, { stream: true });
    rawBytes += value.byteLength;
    if (rawBytes < nextLook) continue;
    // Decoding the prefix costs its length: look again only once it has grown by half.
    nextLook = Math.ceil(rawBytes * 1.5);
    const prefix = codePrefix(raw);
    if (prefix === null) {
      if (rawBytes > maxRaw) throw unexpectedAnswer();
      continue;
    }
    if (prefix.complete) return { kind: 'text', text: prefix.text, longer: false };
    if (Buffer.byteLength(prefix.text) >= wantBytes || rawBytes > maxRaw) {
      return { kind: 'text', text: prefix.text, longer: true };
    }
  }
  raw += decoder.decode();
  let body: SelectFileRecord;
  try {
    body = JSON.parse(raw) as SelectFileRecord;
  } catch {
    throw unexpectedAnswer();
  }
  if (typeof body?.code !== 'string') throw unexpectedAnswer();
  return { kind: 'text', text: body.code, longer: false };
}

/**
 * The `code` string of a JSON answer read so far: whole when its closing quote was read, else every
 * character before the last escape that may be cut. Null when the answer does not start as expected.
 */
export function codePrefix(raw: string): { text: string; complete: boolean } | null {
  const start = CODE_PREFIX.exec(raw)?.[0].length;
  if (start === undefined) return null;
  let at = start;
  let safe = start;
  while (at < raw.length) {
    const char = raw.charCodeAt(at);
    if (char === 0x22) return { text: JSON.parse(raw.slice(start - 1, at + 1)) as string, complete: true };
    if (char === 0x5c) {
      const escaped = raw[at + 1];
      const length = escaped === 'u' ? 6 : 2;
      if (escaped === undefined || at + length > raw.length) break;
      at += length;
    } else {
      at++;
    }
    safe = at;
  }
  let text = JSON.parse(`${raw.slice(start - 1, safe)}"`) as string;
  // A surrogate pair cut after its first half (`\ud83d` read, `\ude00` not yet): leave the half out.
  const last = text.charCodeAt(text.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) text = text.slice(0, -1);
  return { text, complete: false };
}
