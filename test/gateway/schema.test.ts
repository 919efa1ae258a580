/**
 * The committed artefacts stay in step with the code: schema.graphql with the Pothos schema, and the
 * generated typed documents with schema.graphql + test/gateway/documents.ts.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generate } from '@graphql-codegen/cli';
import { describe, expect, it } from 'vitest';
import codegenConfig from '../../codegen.ts';
import { renderSchema, SCHEMA_FILE } from '../../scripts/print-schema.ts';

const ROOT = resolve(import.meta.dirname, '../..');

describe('committed schema and generated documents', () => {
  it('schema.graphql matches the Pothos schema (run `npm run schema:print` when this fails)', () => {
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    expect(
      committed === renderSchema(),
      'schema.graphql is stale: run `npm run schema:print` (then `npm run codegen`) and commit both',
    ).toBe(true);
  });

  it('test/generated matches codegen output (run `npm run codegen` when this fails)', async () => {
    const outputs = (await generate({ ...codegenConfig, cwd: ROOT, silent: true }, false)) as Array<{
      filename: string;
      content: string;
    }>;
    expect(outputs.length).toBeGreaterThan(0);
    for (const output of outputs) {
      const onDisk = readFileSync(join(ROOT, output.filename), 'utf8');
      expect(
        onDisk === output.content,
        `${output.filename} is stale: run \`npm run codegen\` and commit it`,
      ).toBe(true);
    }
  }, 30_000);

  it('every type, field and argument has a description', () => {
    // The checker itself flags what it should.
    expect(undocumentedLines('type A {\n  b: Int\n}\n')).toEqual(['type A {', 'b: Int']);
    expect(
      undocumentedLines('"""A."""\ntype A {\n  """B."""\n  b(\n    """C."""\n    c: Int\n  ): Int\n}\n'),
    ).toEqual([]);
    expect(undocumentedLines(renderSchema())).toEqual([]);
  });
});

/** Definitions, fields, arguments and enum values not directly preceded by a description. */
function undocumentedLines(sdl: string): string[] {
  const lines = sdl.split('\n');
  const undocumented: string[] = [];
  let depth = 0;
  for (let i = 0; i < lines.length; i++) {
    const trimmed = (lines[i] ?? '').trim();
    const previous = (lines[i - 1] ?? '').trim();
    const isDefinition = /^(type|input|enum|interface|union|scalar) /.test(trimmed);
    const isMember = depth > 0 && /^[A-Za-z_]/.test(trimmed);
    if ((isDefinition || isMember) && !previous.endsWith('"""')) undocumented.push(trimmed);
    if (trimmed.endsWith('{') || trimmed.endsWith('(')) depth++;
    if (trimmed.startsWith('}') || trimmed.startsWith(')')) depth--;
  }
  return undocumented;
}
