import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, HelpRequested, loadConfig } from '../../src/config.ts';
import { SETTINGS } from '../../src/settings.ts';
import { CONFIGURATION_PAGE, readConfigTable } from '../../src/settings-docs.ts';
import { renderConfigurationTable, renderHelp } from '../../src/settings-text.ts';
import { spawnTypeScript } from '../helpers/processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');

describe('settings table', () => {
  it('is what the table of docs/configuration.md says (run `npm run docs:config` after changing it)', () => {
    const page = readFileSync(join(ROOT, CONFIGURATION_PAGE), 'utf8');
    expect(
      readConfigTable(page),
      `${CONFIGURATION_PAGE} drifted from src/settings.ts: run \`npm run docs:config\``,
    ).toBe(renderConfigurationTable());
  });

  it('names each flag and env variable once', () => {
    const flags = SETTINGS.flatMap((setting) => (setting.flag ? [setting.flag] : []));
    const envs = SETTINGS.map((setting) => setting.env);
    expect(new Set(flags).size).toBe(flags.length);
    expect(new Set(envs).size).toBe(envs.length);
  });

  it('gives each integer setting its default and refuses one past either bound, naming flag or env', () => {
    const config = loadConfig([], {});
    expect(config.port).toBe(4000);
    for (const setting of SETTINGS) {
      const bounds = setting.integer;
      if (!bounds || !setting.flag) continue;
      if (bounds.fallback !== null) expect(setting.defaultText).toBe(`\`${bounds.fallback}\``);
      expect(() => loadConfig([`--${setting.flag}`, String(bounds.max + 1)], {})).toThrow(
        new ConfigError(`--${setting.flag}`, `expected ${bounds.min}..${bounds.max}, got ${bounds.max + 1}`),
      );
      if (bounds.min > 0) {
        expect(() => loadConfig([], { [setting.env]: String(bounds.min - 1) })).toThrow(
          new ConfigError(setting.env, `expected ${bounds.min}..${bounds.max}, got ${bounds.min - 1}`),
        );
      }
    }
  });

  it('keeps secrets env-only: no flag for the default key or the Redis salt', () => {
    expect(() => loadConfig(['--default-session-api-key', 'k'], {})).toThrow(ConfigError);
    for (const env of ['GATEWAY_DEFAULT_SESSION_API_KEY', 'REDIS_KEY_SALT']) {
      expect(SETTINGS.find((setting) => setting.env === env)?.flag).toBeUndefined();
    }
  });

  it('lists every setting in --help', () => {
    expect(() => loadConfig(['--help'], {})).toThrow(HelpRequested);
    const help = renderHelp();
    for (const setting of SETTINGS) {
      if (setting.flag) expect(help).toContain(`--${setting.flag}`);
      expect(help).toContain(`env ${setting.env};`);
    }
  });

  it('--help prints the help and exits 0 from the process entry', async () => {
    const child = spawnTypeScript('src/index.ts', ['--help'], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'not-a-port' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout?.on('data', (chunk) => {
      stdout += String(chunk);
    });
    const code = await new Promise<number | null>((done) => child.once('exit', (exit) => done(exit)));
    expect(code).toBe(0);
    expect(stdout).toBe(renderHelp());
  });
});
