/**
 * One FastAPI 422 detail item, built the way pydantic v2 words it: `{type, loc, msg, input(, ctx)}`.
 *
 * Every validator of the local service builds its items here, so the wording of enum choices and the
 * masking of secrets that an item would otherwise echo back (an MCP `api_key`, a provider `token`)
 * are decided once.
 */
import type { ValidationIssueRecord } from '../../contract/common.ts';

/** One 422 detail item; `ctx` appears where pydantic adds it (enum, bounds, json_invalid). */
export interface ValidationIssue extends ValidationIssueRecord {
  ctx?: Record<string, unknown>;
}

/** Outcome of a validation: the cleaned value or the FastAPI detail list. */
export type Validated<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** Where an item points, pydantic's `loc`: `body` or `query`, then keys and list indexes. */
export type Loc = Array<string | number>;

/** pydantic's wording of an enum's allowed values: `'a', 'b' or 'c'`. */
export function expectedEnumText(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/** Keys whose values are secrets; they are masked wherever pydantic would echo them back. */
const SECRET_KEYS = new Set(['api_key', 'env', 'token', 'session_api_key']);
const MASK = '**********';

/** Deep copy of an echoed input with secret-bearing keys masked (the real server would echo them). */
function redact(input: unknown, depth = 0): unknown {
  if (depth > 20 || input === null || typeof input !== 'object') return input;
  if (Array.isArray(input)) return input.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) out[k] = SECRET_KEYS.has(k) ? MASK : redact(v, depth + 1);
  return out;
}

/** One detail item; its echoed `input` has secrets masked, wholly so when the field itself is a secret. */
export function issue(
  type: string,
  loc: Loc,
  msg: string,
  input: unknown,
  ctx?: Record<string, unknown>,
): ValidationIssue {
  const last = loc.at(-1);
  const masked = typeof last === 'string' && SECRET_KEYS.has(last) ? MASK : redact(input);
  return ctx ? { type, loc, msg, input: masked, ctx } : { type, loc, msg, input: masked };
}

/** pydantic's item for a required field that is absent (`missing`, `Field required`). */
export function missingIssue(loc: Loc): ValidationIssue {
  return issue('missing', loc, 'Field required', null);
}
