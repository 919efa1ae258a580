/**
 * V0's workspace routes by the port's names: this module is the table a V0 session answers the
 * workspace calls with (src/upstream/workspace-calls.ts), each route opening the conversation's
 * workspace (workspace-target.ts) once it has refused what it can without a call.
 */
import { NotOnThisApiError } from '../port/errors.ts';

export { archive, list, read, upload } from './workspace-files.ts';
export { changes, diff } from './workspace-git.ts';
export { links } from './workspace-links.ts';

/** 0.53 has no commit routes. */
export async function commits(): Promise<never> {
  throw new NotOnThisApiError('v0');
}

/** 0.53 has no commit routes. */
export async function commitChanges(): Promise<never> {
  throw new NotOnThisApiError('v0');
}
