/**
 * The code tables of docs/errors.md (a table whose first column is headed `code`) list exactly the
 * codes of src/errors.ts: a code added to the catalogue without documentation, or documented but never
 * produced, fails here. Code tables elsewhere in the docs and the README (how a subscription ends, in
 * docs/live-events.md) may list a subset, never a code the catalogue lacks.
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

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The codes listed in the code tables of one Markdown page. */
function codeTables(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const codes = new Set<string>();
  let inCodeTable = false;
  for (const line of text.split('\n')) {
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

  it('the code tables of docs/errors.md list exactly the catalogue codes', () => {
    const documented = codeTables('docs/errors.md');
    expect([...documented].sort()).toEqual([...ERROR_CODES].sort());
  });

  it('no other page lists a code the catalogue lacks', () => {
    const pages = [
      'README.md',
      ...readdirSync(join(ROOT, 'docs'))
        .filter((file) => file.endsWith('.md'))
        .map((file) => `docs/${file}`),
    ];
    const known = new Set<string>(ERROR_CODES);
    const unknown = pages.flatMap((page) =>
      [...codeTables(page)].filter((code) => !known.has(code)).map((code) => `${page}: ${code}`),
    );
    expect(unknown).toEqual([]);
    // The scan finds the subscription's end codes where docs/live-events.md lists them.
    expect(codeTables('docs/live-events.md').has('SUBSCRIBER_TOO_SLOW')).toBe(true);
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
