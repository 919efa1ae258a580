/**
 * Where the configuration table sits in docs/configuration.md, so `npm run docs:config` can rewrite it
 * and test/gateway/settings-table.test.ts can compare it with the one rendered from src/settings.ts.
 */
import { renderConfigurationTable } from './settings-text.ts';

/** The page that holds the table, relative to the repository root. */
export const CONFIGURATION_PAGE = 'docs/configuration.md';

const HEADING = '## Settings';

/** The table lines under the Settings heading: the first run of lines starting with `|`. */
function findConfigTable(page: string): { start: number; end: number } {
  const lines = page.split('\n');
  const heading = lines.indexOf(HEADING);
  if (heading < 0) throw new Error(`${CONFIGURATION_PAGE} has no "${HEADING}" heading`);
  const start = lines.findIndex((line, index) => index > heading && line.startsWith('|'));
  if (start < 0) throw new Error(`${CONFIGURATION_PAGE} has no table under the "${HEADING}" heading`);
  let end = start;
  while (lines[end]?.startsWith('|')) end++;
  return { start, end };
}

/** The page's current configuration table, as text. */
export function readConfigTable(page: string): string {
  const { start, end } = findConfigTable(page);
  return page.split('\n').slice(start, end).join('\n');
}

/** The page with its configuration table replaced by the one rendered from the settings table. */
export function replaceConfigTable(page: string): string {
  const { start, end } = findConfigTable(page);
  const lines = page.split('\n');
  lines.splice(start, end - start, ...renderConfigurationTable().split('\n'));
  return lines.join('\n');
}
