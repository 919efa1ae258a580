/**
 * Prints the Pothos schema, lexicographically sorted, to schema.graphql (`npm run schema:print`).
 * The schema test compares the committed file with {@link renderSchema}.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/schema/index.ts';

/** Where the committed SDL lives. */
export const SCHEMA_FILE = fileURLToPath(new URL('../schema.graphql', import.meta.url));

/** The SDL as committed: sorted, with a trailing newline. */
export function renderSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(SCHEMA_FILE, renderSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}
