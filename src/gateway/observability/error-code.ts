/**
 * The one reader of an error's code for everything that observes operations (log, metrics, traces).
 * Errors reach observers from many origins: graphql-js, graphql-jit (whose GraphQLErrors have
 * `extensions` undefined), envelop plugins, our own code, and thrown values that are not errors at
 * all (`null`, strings, objects with throwing getters). Reading `error.extensions.code` directly threw
 * on jit's errors and turned answers into HTTP 500; this function cannot throw, whatever it is given.
 */

/** What {@link errorCode} answers for an error without a readable code. */
const UNCODED = 'INTERNAL';

/** Codes look like `UPSTREAM_TIMEOUT`; anything else (client-influenced text, huge strings) is not one. */
const CODE_SHAPE = /^[A-Z][A-Z0-9_]{0,47}$/;

/**
 * The error's `extensions.code` when it is a well-formed code, else {@link UNCODED}. Safe as a metric
 * label (bounded shape) and as a log field. Never throws.
 */
export function errorCode(error: unknown): string {
  try {
    if (typeof error !== 'object' || error === null) return UNCODED;
    const extensions: unknown = (error as { extensions?: unknown }).extensions;
    if (typeof extensions !== 'object' || extensions === null) return UNCODED;
    const code: unknown = (extensions as { code?: unknown }).code;
    return typeof code === 'string' && CODE_SHAPE.test(code) ? code : UNCODED;
  } catch {
    // A getter or proxy that throws: still an error of unknown kind, never a failed operation.
    return UNCODED;
  }
}

/** The distinct codes of a list of errors, in first-seen order. Never throws. */
export function errorCodes(errors: unknown): string[] {
  const codes = new Set<string>();
  try {
    if (!Array.isArray(errors)) return [];
    for (const error of errors) codes.add(errorCode(error));
  } catch {
    codes.add(UNCODED);
  }
  return [...codes];
}
