/**
 * Integer text read the way pydantic reads it, shared by the query validators, the socket's
 * `latest_event_id` and the command line's numeric flags so that all of them accept the same strings.
 */

/** A whole-string integer (optional sign, surrounding whitespace allowed as pydantic does), else undefined. */
export function parseIntStrict(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[+-]?\d+$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isSafeInteger(n) ? n : undefined;
}
