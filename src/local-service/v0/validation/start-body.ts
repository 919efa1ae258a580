/**
 * The body of POST /api/conversations/{id}/start (the real server's ProvidersSetModel).
 */
import type { GitProviderValue } from '../../../contract/common.ts';
import { GIT_PROVIDERS } from '../../../contract/common.ts';
import { type Schema, validateBody } from '../../validation/body-schema.ts';
import type { Validated } from '../../validation/issue.ts';

const START_CONVERSATION_SCHEMA: Schema = {
  kind: 'object',
  name: 'ProvidersSetModel',
  extra: 'ignore',
  fields: {
    providers_set: {
      schema: { kind: 'list', item: { kind: 'enum', values: GIT_PROVIDERS } },
      nullable: true,
    },
  },
};

/** Validates a POST /api/conversations/{id}/start body (`{}` is valid; unknown keys are ignored). */
export function validateStartConversation(
  body: unknown,
): Validated<{ providers_set?: GitProviderValue[] | null }> {
  return validateBody(START_CONVERSATION_SCHEMA, body);
}
