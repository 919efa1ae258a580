/**
 * V1's workspace routes by the port's names: this module is the table a V1 session answers the
 * workspace calls with (src/upstream/workspace-calls.ts), each route opening the conversation's
 * workspace (workspace-target.ts) once it has refused what it can without a call.
 */

export { archive, list, read, upload } from './workspace-files.ts';
export { changes, commitChanges, commits, diff } from './workspace-git.ts';
export { links } from './workspace-links.ts';
