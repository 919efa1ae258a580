/**
 * The body of POST /api/add-git-providers (the real server's POSTProviderModel): a map of provider
 * name to token, where every name must be a known git provider (422 enum at the `[key]`).
 */
import type { AddGitProvidersRequestRecord } from '../../contract/common.ts';
import { GIT_PROVIDERS } from '../../contract/common.ts';
import { optionalString, type Schema, validateBody } from './body-schema.ts';
import { expectedEnumText, issue, type Validated, type ValidationIssue } from './issue.ts';

const ADD_GIT_PROVIDERS_SCHEMA: Schema = {
  kind: 'object',
  name: 'POSTProviderModel',
  extra: 'ignore',
  fields: {
    provider_tokens: {
      schema: {
        kind: 'dict',
        value: {
          kind: 'object',
          name: 'ProviderToken',
          extra: 'ignore',
          fields: { token: { schema: { kind: 'string' }, required: true }, host: optionalString },
        },
      },
    },
  },
};

/** Validates a POST /api/add-git-providers body; provider names must be known providers. */
export function validateAddGitProviders(body: unknown): Validated<AddGitProvidersRequestRecord> {
  const result = validateBody<{ provider_tokens?: Record<string, unknown> }>(ADD_GIT_PROVIDERS_SCHEMA, body);
  if (!result.ok) return result;
  const tokens = result.value.provider_tokens ?? {};
  const issues: ValidationIssue[] = [];
  const expected = expectedEnumText(GIT_PROVIDERS);
  for (const provider of Object.keys(tokens)) {
    if (!(GIT_PROVIDERS as readonly string[]).includes(provider)) {
      issues.push(
        issue(
          'enum',
          ['body', 'provider_tokens', provider, '[key]'],
          `Input should be ${expected}`,
          provider,
          {
            expected,
          },
        ),
      );
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: { provider_tokens: tokens } as AddGitProvidersRequestRecord };
}
