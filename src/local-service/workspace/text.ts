/**
 * Text as the Python servers read it: strict UTF-8 (an error where Python raises
 * `UnicodeDecodeError`), UTF-8 with replacement characters (`errors='replace'`), and a file's lines
 * re-joined the way both APIs' diff scripts do (`'\n'.join(f.read().splitlines())`).
 */

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/** The bytes as UTF-8 text, or null when they are not valid UTF-8. A BOM is kept, as Python keeps it. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strict.decode(bytes);
  } catch {
    return null;
  }
}

/** The bytes as UTF-8 text, invalid sequences replaced by U+FFFD (Python's `errors='replace'`). */
export function decodeUtf8Lenient(bytes: Uint8Array): string {
  return lenient.decode(bytes);
}

/** Where Python's `str.splitlines()` breaks a line (`\r\n` counts once). */
const LINE_BREAKS = new Set([
  '\n',
  '\r',
  '\v',
  '\f',
  '\u001c',
  '\u001d',
  '\u001e',
  '\u0085',
  '\u2028',
  '\u2029',
]);

/** Python's `'\n'.join(text.splitlines())`: the lines joined by `\n`, a final line break dropped. */
export function rejoinLines(text: string): string {
  const lines: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (!LINE_BREAKS.has(ch)) {
      current += ch;
      continue;
    }
    lines.push(current);
    current = '';
    if (ch === '\r' && text[i + 1] === '\n') i++;
  }
  if (current !== '') lines.push(current);
  return lines.join('\n');
}
