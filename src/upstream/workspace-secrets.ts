/**
 * Secrets in what a workspace holds. Both APIs clone a repository with the git provider's token inside
 * the remote URL (`https://<token>@github.com/...` or `https://user:<token>@...`), so the token sits in
 * `.git/config` (never read: workspace-path.ts refuses `.git`) and can surface in any text the agent
 * copied it into: a file, a diff, a log. Every text the gateway reads from a workspace passes here
 * first: a URL's credentials are replaced, and well-known token shapes anywhere are redacted too.
 */
import { redactTokenShapes } from './rejection-message.ts';

const REDACTED = '[redacted]';

/** `scheme://user:password@` or `scheme://token@`: the part before `@` is a credential. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@:'"<>]+(?::[^\s/@'"<>]*)?)@/gi;

/** `text` with every URL credential and well-known token shape replaced by `[redacted]`. */
export function scrubWorkspaceText(text: string): string {
  return redactTokenShapes(
    text.replace(URL_CREDENTIALS, (_match, scheme: string) => `${scheme}${REDACTED}@`),
  );
}
