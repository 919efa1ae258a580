/**
 * The README's error-code tables (a table whose first column is headed `code`) list exactly the codes
 * of src/errors.ts: a code added to the catalogue without documentation, or documented but never
 * produced, fails here.
 */
import { readFileSync } from 'node:fs';
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

describe('error catalogue', () => {
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
