/**
 * The readable reason of an upstream 4xx, made safe to show the caller.
 *
 * The upstream refuses in three readable shapes: `{"status":"error","message":..,"msg_id":..}`, the
 * same without `msg_id`, and FastAPI's `{"detail":"..."}`. Each is an outcome the client can act on,
 * so it reaches the client as the mutation's error member, never as UPSTREAM_ERROR. An upstream
 * message may echo what the caller sent, so every secret the caller sent (its key or token, MCP
 * `api_key`s and `env` values, git tokens) and anything shaped like a well-known token is replaced by
 * `[redacted]` first. Which domain error a rejection becomes is rejection-errors.ts.
 */
import { credentialSecret, type UpstreamCredentials } from './credentials.ts';

/** Longest message passed on; an upstream that sends a page of text gets it cut. */
const MAX_MESSAGE_LENGTH = 500;
const REDACTED = '[redacted]';

/** Body keys whose string values are secrets; under `env`, every value is one. */
const SECRET_KEYS = /^(api_key|token|session_api_key|password|secret)$/i;

/** Token shapes worth hiding even when the caller did not send them (someone else's would be as bad). */
const TOKEN_SHAPES: readonly RegExp[] = [
  /\bBearer\s+\S+/gi,
  /\b(?:gh[pousr]_|github_pat_|glpat-|xox[abpr]-|sk-)[A-Za-z0-9_.-]{6,}/g,
];

/** The readable reason of a 4xx body, scrubbed; null when the body carries none. */
export function readableRejection(
  body: unknown,
  secrets: readonly string[],
): { message: string; msgId: string | null } | null {
  if (typeof body !== 'object' || body === null) return null;
  const { msg_id: msgId, message, detail } = body as Record<string, unknown>;
  const text = [message, detail].find((value) => typeof value === 'string' && value.trim() !== '') as
    | string
    | undefined;
  if (typeof msgId === 'string' && msgId !== '') {
    return { message: scrubSecrets(text ?? msgId, secrets), msgId: scrubSecrets(msgId, secrets) };
  }
  if (text === undefined) return null;
  return { message: scrubSecrets(text, secrets), msgId: null };
}

/** Replaces each of `secrets` and every well-known token shape in `text` by `[redacted]`, then trims. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let scrubbed = text;
  // Longest first, so a secret that contains another is removed whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    scrubbed = scrubbed.split(secret).join(REDACTED);
  }
  scrubbed = redactTokenShapes(scrubbed).trim();
  return scrubbed.length > MAX_MESSAGE_LENGTH ? `${scrubbed.slice(0, MAX_MESSAGE_LENGTH)}…` : scrubbed;
}

/** `text` with every well-known token shape replaced by `[redacted]`, nothing else changed. */
export function redactTokenShapes(text: string): string {
  let redacted = text;
  for (const shape of TOKEN_SHAPES) {
    redacted = redacted.replace(shape, (match) =>
      match.toLowerCase().startsWith('bearer') ? `Bearer ${REDACTED}` : REDACTED,
    );
  }
  return redacted;
}

/**
 * The secrets of one call: the caller's credential and the secret values of the request body.
 * Values shorter than 4 characters are left out: scrubbing "ab" from a message would garble it, and
 * such a value protects nothing.
 */
export function secretsOf(credentials: UpstreamCredentials, body: unknown): string[] {
  const found: string[] = [];
  found.push(credentialSecret(credentials));
  collect(body, false, found);
  return [...new Set(found)].filter((secret) => secret.length >= 4);
}

function collect(value: unknown, secret: boolean, found: string[]): void {
  if (typeof value === 'string') {
    if (secret) found.push(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) collect(item, secret, found);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    collect(item, secret || SECRET_KEYS.test(key) || key === 'env', found);
  }
}
