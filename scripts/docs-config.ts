/**
 * `npm run docs:config`: rewrites the configuration table of docs/configuration.md from src/settings.ts.
 * test/gateway/settings-table.test.ts fails until this has been run after a settings change.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CONFIGURATION_PAGE, replaceConfigTable } from '../src/settings-docs.ts';

const path = resolve(import.meta.dirname, '..', CONFIGURATION_PAGE);
const before = readFileSync(path, 'utf8');
const after = replaceConfigTable(before);
if (after !== before) writeFileSync(path, after);
console.log(
  `${CONFIGURATION_PAGE}: configuration table ${after === before ? 'already current' : 'rewritten'}`,
);
