/**
 * A small walker over pydantic-like models: it checks a parsed JSON body against a declared shape and
 * lists every problem as pydantic v2 would (types, missing fields, `extra='forbid'`), nothing stopped
 * at the first.
 *
 * Hand-rolled rather than zod because the wire contract is pydantic's error types and messages;
 * mapping zod issues back onto them would be more code than this walker. The route-specific checks
 * that a shape cannot say (id patterns, title bounds, provider names) live with each body's validator.
 */
import { isJsonObject } from '../../contract/json.ts';
import { expectedEnumText, issue, type Loc, type Validated, type ValidationIssue } from './issue.ts';
import { parseIntStrict } from './strict-int.ts';

/** A declared shape: the subset of pydantic's field types the upstream's request models use. */
export type Schema =
  | { kind: 'any' }
  | { kind: 'string' }
  | { kind: 'int' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'list'; item: Schema }
  | { kind: 'dict'; value: Schema }
  | {
      kind: 'object';
      name: string;
      fields: Record<string, { schema: Schema; required?: boolean; nullable?: boolean }>;
      /** pydantic's `extra='forbid'` (422 extra_forbidden) or the default `ignore` (dropped silently). */
      extra: 'forbid' | 'ignore';
    };

/** Checks `input` against `schema` at `loc`, pushing every problem; returns the cleaned value. */
export function walk(schema: Schema, input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  switch (schema.kind) {
    case 'any':
      return input;
    case 'string':
      if (typeof input !== 'string')
        issues.push(issue('string_type', loc, 'Input should be a valid string', input));
      return input;
    case 'int':
      return walkInt(input, loc, issues);
    case 'enum':
      if (typeof input !== 'string' || !schema.values.includes(input)) {
        const expected = expectedEnumText(schema.values);
        issues.push(issue('enum', loc, `Input should be ${expected}`, input, { expected }));
      }
      return input;
    case 'list':
      if (!Array.isArray(input)) {
        issues.push(issue('list_type', loc, 'Input should be a valid list', input));
        return input;
      }
      return input.map((item, i) => walk(schema.item, item, [...loc, i], issues));
    case 'dict': {
      if (!isJsonObject(input)) {
        issues.push(issue('dict_type', loc, 'Input should be a valid dictionary', input));
        return input;
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(input)) out[k] = walk(schema.value, v, [...loc, k], issues);
      return out;
    }
    case 'object': {
      if (!isJsonObject(input)) {
        issues.push(
          issue(
            'model_type',
            loc,
            `Input should be a valid dictionary or instance of ${schema.name}`,
            input,
            {
              class_name: schema.name,
            },
          ),
        );
        return input;
      }
      const out: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(schema.fields)) {
        if (!(name in input)) {
          if (field.required) issues.push(issue('missing', [...loc, name], 'Field required', input));
          continue;
        }
        const value = input[name];
        if (value === null && field.nullable) {
          out[name] = null;
          continue;
        }
        out[name] = walk(field.schema, value, [...loc, name], issues);
      }
      if (schema.extra === 'forbid') {
        for (const key of Object.keys(input)) {
          if (!(key in schema.fields)) {
            issues.push(
              issue('extra_forbidden', [...loc, key], 'Extra inputs are not permitted', input[key]),
            );
          }
        }
      }
      return out;
    }
  }
}

/** pydantic's lax int: integers, integral floats and integer strings; each other case has its own type. */
function walkInt(input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  if (typeof input === 'number') {
    if (Number.isInteger(input)) return input;
    issues.push(
      issue(
        'int_from_float',
        loc,
        'Input should be a valid integer, got a number with a fractional part',
        input,
      ),
    );
    return input;
  }
  if (typeof input === 'string') {
    const parsed = parseIntStrict(input);
    if (parsed !== undefined) return parsed;
    issues.push(
      issue(
        'int_parsing',
        loc,
        'Input should be a valid integer, unable to parse string as an integer',
        input,
      ),
    );
    return input;
  }
  issues.push(issue('int_type', loc, 'Input should be a valid integer', input));
  return input;
}

/** A field that may be absent or null, else a string (pydantic's `str | None = None`). */
export const optionalString = { schema: { kind: 'string' }, nullable: true } as const;

/** Validates a whole JSON body against a model; a non-object body is pydantic's model_attributes_type. */
export function validateBody<T>(schema: Schema, body: unknown): Validated<T> {
  if (!isJsonObject(body)) {
    return {
      ok: false,
      issues: [
        issue(
          'model_attributes_type',
          ['body'],
          'Input should be a valid dictionary or object to extract fields from',
          body,
        ),
      ],
    };
  }
  const issues: ValidationIssue[] = [];
  const value = walk(schema, body, ['body'], issues);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: value as T };
}
