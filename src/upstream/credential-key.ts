/**
 * The one way a credential becomes a key in a map, a metric-free counter or Redis: a salted sha256 of
 * its kind and secret, never the secret itself (those maps outlive operations, and Redis is shared).
 */
import { hash } from 'node:crypto';
import { credentialSecret, type UpstreamCredentials } from './credentials.ts';

/** Hex sha256 of `salt`, the credential's kind and its secret; callers without one share one key. */
export function credentialKey(credentials: UpstreamCredentials, salt: string): string {
  const secret = credentialSecret(credentials);
  // One-shot hash(): a third of createHash's cost, and this runs for every operation.
  return hash('sha256', `${salt}\0${credentials.kind}\0${secret}`, 'hex');
}
