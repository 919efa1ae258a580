/**
 * Who is calling: maps the presented session API key to a tenant, like the real server's key check
 * but with one tenant per configured key so isolation between callers can be tested.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Opaque tenant id. Each configured session API key is its own tenant; with no key configured every
 * caller is the one tenant `default`. Derived from the key (never the key itself), so the store holds
 * no caller secret.
 */
export type TenantId = string;

/** Maps a presented key to its tenant; null means "refuse" (401 on REST, invalid_session_api_key on the socket). */
export type TenantResolver = (presentedKey: string | undefined) => TenantId | null;

/** The one tenant every caller belongs to when no key is configured (the real server's open mode). */
export const DEFAULT_TENANT: TenantId = 'default';

function digest(key: string): Buffer {
  // Domain-separated so the tenant id is not simply "sha256 of the key" reusable elsewhere.
  return createHash('sha256').update('local-service-tenant:').update(key).digest();
}

/**
 * Builds the resolver for a set of configured keys.
 * - No keys: nothing is checked; every caller (with or without a key) is {@link DEFAULT_TENANT}.
 * - Keys: the presented key must equal one of them, else null (401 / invalid_session_api_key).
 *   Each key is its own tenant, named by a hash of the key, never the key itself.
 * Comparison hashes first and compares fixed-length digests with timingSafeEqual, so neither the
 * length nor the content of a configured key leaks through response timing.
 */
export function createTenantResolver(keys: readonly string[]): TenantResolver {
  const configured = [...new Set(keys.filter((k) => k.length > 0))].map((key) => {
    const d = digest(key);
    return { digest: d, tenant: `t_${d.toString('hex').slice(0, 32)}` };
  });
  if (configured.length === 0) return () => DEFAULT_TENANT;
  return (presentedKey) => {
    if (presentedKey === undefined || presentedKey.length === 0) return null;
    const presented = digest(presentedKey);
    let match: TenantId | null = null;
    // Visit every configured key even after a match so the time taken does not say which one matched.
    for (const entry of configured) {
      if (timingSafeEqual(presented, entry.digest)) match = entry.tenant;
    }
    return match;
  };
}

/** A key found in the request headers and which header carried it. */
export interface PresentedKey {
  key: string | undefined;
  /** True when it came as `Authorization: Bearer` (the hosted variant; its callers get trigger `openhands_api`). */
  viaBearer: boolean;
}

/** Reads `X-Session-API-Key`, falling back to `Authorization: Bearer <key>`. */
export function extractPresentedKey(headers: IncomingHttpHeaders): PresentedKey {
  const sessionKey = headers['x-session-api-key'];
  const value = Array.isArray(sessionKey) ? sessionKey[0] : sessionKey;
  if (value !== undefined && value.length > 0) return { key: value, viaBearer: false };
  const authorization = headers.authorization;
  const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  if (match?.[1]) return { key: match[1], viaBearer: true };
  return { key: undefined, viaBearer: false };
}
