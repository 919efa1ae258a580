/**
 * The shape of one row of the settings table (src/settings.ts), in a file of its own so that the
 * table's parts (src/settings-workspace.ts) can declare rows without importing the table.
 */

/** One setting: how it is spelled, what it defaults to, and what it means. */
export interface Setting {
  /** Command-line flag without `--`; absent for env-only settings (secrets: flags show in `ps`). */
  flag?: string;
  /** Placeholder of the flag's value in help and docs, e.g. `<n>`. */
  arg?: string;
  /** Environment variable. */
  env: string;
  /** Heading the setting is listed under in `--help`. */
  group: string;
  /** The default as users read it (docs and help). */
  defaultText: string;
  /** What the setting does (docs and help). */
  description: string;
  /** Integer settings: the value when unset and the accepted range (inclusive). null fallback = derived. */
  integer?: { fallback: number | null; min: number; max: number };
}
