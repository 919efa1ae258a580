/**
 * The settings table (src/settings.ts) as people read it: the `--help` text and the Markdown table of
 * docs/configuration.md. Rendering only; where the table sits in the page is src/settings-docs.ts.
 */
import { SETTINGS, type Setting } from './settings.ts';

function flagCell(setting: Setting): string {
  return setting.flag ? `\`--${setting.flag}${setting.arg ? ` ${setting.arg}` : ''}\`` : '(env only)';
}

/** The configuration table of docs/configuration.md (Markdown, columns padded as a formatter leaves them). */
export function renderConfigurationTable(): string {
  const header = ['flag', 'env', 'default', 'meaning'];
  const rows = SETTINGS.map((s) => [flagCell(s), `\`${s.env}\``, s.defaultText, s.description]);
  // Width in code points, as Markdown formatters count them (× and ÷ are one each).
  const length = (cell: string) => [...cell].length;
  const widths = header.map((title, column) =>
    Math.max(length(title), ...rows.map((row) => length(row[column] ?? ''))),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell + ' '.repeat((widths[column] ?? 0) - length(cell))).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** The `--help` text: usage, then each group's settings with env name, default and meaning. */
export function renderHelp(): string {
  const out = [
    'Usage: conversation-gateway [--flag value ...]',
    '',
    'Flags win over environment variables; a bad value stops start-up naming the setting.',
  ];
  const groups = [...new Set(SETTINGS.map((s) => s.group))];
  for (const group of groups) {
    out.push('', `${group}:`);
    for (const s of SETTINGS.filter((row) => row.group === group)) {
      const name = s.flag ? `--${s.flag}${s.arg ? ` ${s.arg}` : ''}` : '(env only)';
      out.push(`  ${name}  [env ${s.env}; default ${s.defaultText.replaceAll('`', '')}]`);
      out.push(`      ${s.description.replaceAll('`', '')}`);
    }
  }
  out.push('', '  --help  print this text and exit');
  return `${out.join('\n')}\n`;
}
