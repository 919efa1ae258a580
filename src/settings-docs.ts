/** Where the README's configuration table sits, so the script can rewrite it and the test can compare it. */
import { renderConfigurationTable } from './settings-text.ts';

const HEADING = '### Configuration';

/** The table lines under the Configuration heading: the first run of lines starting with `|`. */
function findConfigTable(readme: string): { start: number; end: number } {
  const lines = readme.split('\n');
  const heading = lines.indexOf(HEADING);
  if (heading < 0) throw new Error(`README has no "${HEADING}" heading`);
  const start = lines.findIndex((line, index) => index > heading && line.startsWith('|'));
  if (start < 0) throw new Error('README has no table under the Configuration heading');
  let end = start;
  while (lines[end]?.startsWith('|')) end++;
  return { start, end };
}

/** The README's current configuration table, as text. */
export function readConfigTable(readme: string): string {
  const { start, end } = findConfigTable(readme);
  return readme.split('\n').slice(start, end).join('\n');
}

/** The README with its configuration table replaced by the one rendered from the settings table. */
export function replaceConfigTable(readme: string): string {
  const { start, end } = findConfigTable(readme);
  const lines = readme.split('\n');
  lines.splice(start, end - start, ...renderConfigurationTable().split('\n'));
  return lines.join('\n');
}
