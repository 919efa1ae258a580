/**
 * What a JSON value read off the wire is, before it is trusted: every reader of an upstream's answer
 * (the gateway's adapters) and of a client's request (the bundled service) checks the same way.
 */

/** A JSON object as parsed, its fields not yet checked. */
export type JsonObject = Record<string, unknown>;

/** Whether `value` is a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` when it is a string, else null (a field the wire may leave out, null or mistype). */
export function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
