/**
 * The README's error-code tables (a table whose first column is headed `code`) list exactly the codes
 * of src/errors.ts: a code added to the catalogue without documentation, or documented but never
 * produced, fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  badUserInput,
  ERROR_CATALOGUE,
  ERROR_CODES,
  SHUTTING_DOWN_MESSAGE,
  shuttingDown,
} from '../../src/errors.ts';

function readmeCodeTables(): Set<string> {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const codes = new Set<string>();
  let inCodeTable = false;
  for (const line of readme.split('\n')) {
    if (!line.startsWith('|')) {
      inCodeTable = false;
      continue;
    }
    const first = line.split('|')[1]?.trim() ?? '';
    if (first === 'code') {
      inCodeTable = true;
      continue;
    }
    const code = /^`([A-Z][A-Z_]+)`$/.exec(first);
    if (inCodeTable && code?.[1]) codes.add(code[1]);
  }
  return codes;
}

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** A code written as a string in a `code` field, or a GraphQLError built by hand. */
const INLINE_ERROR = [/\bcode\s*[:=]\s*['"`][A-Z]/, /\bnew GraphQLError\(/];

/** `file:line: text` of each line of `sources` that builds a coded error outside the catalogue. */
function inlineErrorSites(sources: { file: string; text: string }[]): string[] {
  const sites: string[] = [];
  for (const { file, text } of sources) {
    text.split('\n').forEach((line, index) => {
      if (INLINE_ERROR.some((pattern) => pattern.test(line)))
        sites.push(`${file}:${index + 1}: ${line.trim()}`);
    });
  }
  return sites;
}

/** Every .ts file under src/ except the catalogue itself. */
function sourcesOutsideCatalogue(): { file: string; text: string }[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => relative(SRC, join(SRC, file)))
    .filter((file) => file !== 'errors.ts')
    .map((file) => ({ file, text: readFileSync(join(SRC, file), 'utf8') }));
}

describe('error catalogue', () => {
  it('src/ builds coded errors only through src/errors.ts (no inline code string, no new GraphQLError)', () => {
    const sources = sourcesOutsideCatalogue();
    expect(sources.length).toBeGreaterThan(50);
    expect(inlineErrorSites(sources)).toEqual([]);
    // The scan itself finds what it must.
    const inline =
      "throw new GraphQLError('No.', {\n  extensions: { code: 'NOPE' },\n});\nextensions.code = 'NOPE';";
    expect(inlineErrorSites([{ file: 'x.ts', text: inline }])).toEqual([
      "x.ts:1: throw new GraphQLError('No.', {",
      "x.ts:2: extensions: { code: 'NOPE' },",
      "x.ts:4: extensions.code = 'NOPE';",
    ]);
  });

  it('the README code tables list exactly the catalogue codes', () => {
    const documented = readmeCodeTables();
    expect([...documented].sort()).toEqual([...ERROR_CODES].sort());
  });

  it('constructors carry the catalogue code and the one shutting-down message', () => {
    const refused = shuttingDown();
    expect(refused.message).toBe(SHUTTING_DOWN_MESSAGE);
    expect(refused.extensions).toEqual({ code: 'GATEWAY_SHUTTING_DOWN', http: { status: 503 } });
    expect(badUserInput('x', true).extensions).toEqual({ code: 'BAD_USER_INPUT', http: { status: 400 } });
    expect(badUserInput('x').extensions).toEqual({ code: 'BAD_USER_INPUT' });
    for (const code of ERROR_CODES) expect(ERROR_CATALOGUE[code].message.length).toBeGreaterThan(0);
  });
});
