/**
 * V1's workspace routes by the port's names: the table a V1 session answers the workspace calls with
 * (src/upstream/workspace-calls.ts), each route opening the conversation's workspace
 * (workspace-target.ts) once it has refused what it can without a call.
 */
import { archive, list, read, upload } from './workspace-files.ts';
import { changes, commitChanges, commits, diff } from './workspace-git.ts';
import { links } from './workspace-links.ts';
import type { Routes } from './workspace-target.ts';

export const ROUTES: Routes = { archive, changes, commitChanges, commits, diff, links, list, read, upload };
