/**
 * What V0's file routes decide about a file before they read it (OpenHands 0.53): whether the
 * sandbox calls it binary (`binaryornot`'s `is_binary`, which `read` asks first; `select-file` answers
 * 415 for it), and which listing entries the workspace's `.gitignore` hides (`list-files` filters its
 * answer with pathspec's gitwildmatch patterns).
 */

/** Bytes `binaryornot` counts as printable ASCII: `\n\r\t\f\b` and space to tilde. */
function isPrintableAscii(byte: number): boolean {
  return (
    (byte >= 0x20 && byte < 0x7f) ||
    byte === 0x0a ||
    byte === 0x0d ||
    byte === 0x09 ||
    byte === 0x0c ||
    byte === 0x08
  );
}

/**
 * chardet's verdict "UTF-8 with confidence above 0.9", as far as it goes here: valid UTF-8 (a
 * sequence cut at the chunk's end allowed) with at least four multi-byte characters (chardet's UTF-8
 * prober stays at or below 0.9 with fewer). Other encodings chardet might be sure of are not guessed.
 */
function confidentUtf8(chunk: Uint8Array): boolean {
  let multiByte = 0;
  for (let i = 0; i < chunk.length; ) {
    const byte = chunk[i] ?? 0;
    const length =
      byte < 0x80
        ? 1
        : byte >= 0xc2 && byte < 0xe0
          ? 2
          : byte >= 0xe0 && byte < 0xf0
            ? 3
            : byte >= 0xf0 && byte < 0xf5
              ? 4
              : 0;
    if (length === 0) return false;
    for (let k = 1; k < length; k++) {
      if (i + k >= chunk.length) return multiByte >= 4;
      const next = chunk[i + k] ?? 0;
      if ((next & 0xc0) !== 0x80) return false;
    }
    if (length > 1) multiByte++;
    i += length;
  }
  return multiByte >= 4;
}

/**
 * `binaryornot.check.is_binary` on a file's first 1024 bytes (`.pyc` files are binary by name): many
 * control characters and few high bytes, or a NUL or 0xFF byte in what does not read as UTF-8.
 */
export function looksBinary(fileName: string, head: Uint8Array): boolean {
  if (fileName.endsWith('.pyc')) return true;
  const chunk = head.subarray(0, 1024);
  if (chunk.length === 0) return false;
  // binaryornot's two ratios: bytes that are not printable ASCII, and bytes that are not high (>= 0x7F).
  let notPrintable = 0;
  let notHigh = 0;
  for (const byte of chunk) {
    if (!isPrintableAscii(byte)) notPrintable++;
    if (byte < 0x7f) notHigh++;
  }
  const lowRatio = notPrintable / chunk.length;
  const highRatio = notHigh / chunk.length;
  if (lowRatio > 0.9 && highRatio > 0.9) return true;
  const likelyBinary = (lowRatio > 0.3 && highRatio < 0.05) || (lowRatio > 0.8 && highRatio > 0.8);
  const decodable = confidentUtf8(chunk);
  if (likelyBinary) return !decodable;
  return !decodable && (chunk.includes(0x00) || chunk.includes(0xff));
}

/** One gitwildmatch pattern as a regular expression over a `/`-separated path, and whether it negates. */
function compile(line: string): { regex: RegExp; negated: boolean } | null {
  let pattern = line.replace(/(?<!\\)\s+$/, '');
  if (pattern === '' || pattern.startsWith('#')) return null;
  const negated = pattern.startsWith('!');
  if (negated) pattern = pattern.slice(1);
  const dirOnly = pattern.endsWith('/');
  if (dirOnly) pattern = pattern.slice(0, -1);
  // A pattern with a slash before its end is anchored at the root; one without matches at any depth.
  const anchored = pattern.includes('/');
  pattern = pattern.replace(/^\//, '');
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] ?? '';
    if (pattern.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      source += '.*';
      i += 1;
    } else if (ch === '*') source += '[^/]*';
    else if (ch === '?') source += '[^/]';
    else if (ch === '\\' && i + 1 < pattern.length) source += `\\${pattern[++i]}`;
    else source += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const head = anchored ? '^' : '^(?:.+/)?';
  const tail = dirOnly ? '/.*$' : '(?:/.*)?$';
  return { regex: new RegExp(`${head}${source}${tail}`), negated };
}

/** pathspec's `PathSpec.from_lines(GitWildMatchPattern, lines)`: which entries the patterns hide. */
export function gitignoreFilter(patternText: string): (entry: string) => boolean {
  const patterns = patternText.split(/\r?\n/).flatMap((line) => compile(line) ?? []);
  return (entry) => {
    const path = entry.replace(/^\.\//, '').replace(/^\/+/, '');
    let ignored = false;
    for (const { regex, negated } of patterns) if (regex.test(path)) ignored = !negated;
    return ignored;
  };
}
