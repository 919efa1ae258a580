/**
 * V0's workspace routes by the port's names: the table a V0 session answers the workspace calls with
 * (src/upstream/workspace-calls.ts), each route opening the conversation's workspace
 * (workspace-target.ts) once it has refused what it can without a call.
 */
import { NotOnThisApiError } from '../port/errors.ts';
import { archive, list, read, upload } from './workspace-files.ts';
import { changes, diff } from './workspace-git.ts';
import { links } from './workspace-links.ts';
import type { Routes } from './workspace-target.ts';

/** 0.53 has no commit routes. */
async function commits(): Promise<never> {
  throw new NotOnThisApiError('v0');
}

/** 0.53 has no commit routes. */
async function commitChanges(): Promise<never> {
  throw new NotOnThisApiError('v0');
}

export const ROUTES: Routes = { archive, changes, commitChanges, commits, diff, links, list, read, upload };
