/**
 * Wire shapes both OpenHands APIs share, snake_case as they travel: the answer of `/alive`, FastAPI's
 * 422 body, the git provider names and the body that stores provider tokens, and the suggested task.
 * What only one API sends lives in its own folder (v0/, v1/). Sources: docs/upstream-facts.md.
 */

/** Git providers (the seed's hosting_a/b/c and enterprise_sso). */
export const GIT_PROVIDERS = ['github', 'gitlab', 'bitbucket', 'enterprise_sso'] as const;
export type GitProviderValue = (typeof GIT_PROVIDERS)[number];

/** Task kinds of a suggested task. */
export const SUGGESTED_TASK_TYPES = [
  'MERGE_CONFLICTS',
  'FAILING_CHECKS',
  'UNRESOLVED_COMMENTS',
  'OPEN_ISSUE',
  'OPEN_PR',
  'CREATE_MICROAGENT',
] as const;
export type SuggestedTaskTypeValue = (typeof SUGGESTED_TASK_TYPES)[number];

/** A task the upstream suggests (V0's create body; V1's start request since mid-2026). */
export interface SuggestedTaskRecord {
  git_provider: string;
  task_type: string;
  repo: string;
  issue_number: number;
  title: string;
}

/** One item of a FastAPI 422 body. */
export interface ValidationIssueRecord {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input?: unknown;
}

/** FastAPI 422 body. */
export interface ValidationErrorRecord {
  detail: ValidationIssueRecord[];
}

/** Body of POST /api/add-git-providers. */
export interface AddGitProvidersRequestRecord {
  provider_tokens: Partial<Record<GitProviderValue, { token: string; host?: string | null }>>;
}

/** Health answers outside /api. */
export const ALIVE_BODY = { status: 'ok' } as const;
