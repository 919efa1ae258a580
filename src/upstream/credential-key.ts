/**
 * The one way a credential becomes a key in a map that outlives its calls, a metric-free counter or
 * Redis: a salted sha256 of its kind and secret, never the secret itself (those entries outlive the
 * requests that carried the secret, and Redis is shared). The upstream fair share (fair-share.ts) keys
 * its lanes by the secret: a lane lives only while calls carrying that secret are in flight.
 */
import { hash } from 'node:crypto';
import { credentialSecret, type UpstreamCredentials } from './credentials.ts';

/** Hex sha256 of `salt`, the credential's kind and its secret; callers without one share one key. */
export function credentialKey(credentials: UpstreamCredentials, salt: string): string {
  const secret = credentialSecret(credentials);
  // One-shot hash(): a third of createHash's cost, and this runs for every operation.
  return hash('sha256', `${salt}\0${credentials.kind}\0${secret}`, 'hex');
}
