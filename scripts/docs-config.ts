/**
 * `npm run docs:config`: rewrites the README's configuration table from src/settings.ts.
 * test/gateway/settings-table.test.ts fails until this has been run after a settings change.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { replaceConfigTable } from '../src/settings-docs.ts';

const path = resolve(import.meta.dirname, '../README.md');
const before = readFileSync(path, 'utf8');
const after = replaceConfigTable(before);
if (after !== before) writeFileSync(path, after);
console.log(
  after === before ? 'README configuration table already current' : 'README configuration table rewritten',
);
