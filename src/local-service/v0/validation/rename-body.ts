/**
 * The body of PATCH /api/conversations/{id} (rename): a title of 1..MAX_TITLE_LENGTH characters after
 * stripping.
 */
import { type Schema, validateBody } from '../../validation/body-schema.ts';
import { issue, type Validated } from '../../validation/issue.ts';
import { MAX_TITLE_LENGTH } from '../../validation/title.ts';

const UPDATE_CONVERSATION_SCHEMA: Schema = {
  kind: 'object',
  name: 'UpdateConversationRequest',
  extra: 'forbid',
  fields: { title: { schema: { kind: 'string' }, required: true } },
};

/**
 * Validates a PATCH /api/conversations/{id} body; the cleaned title is stripped. The real server checks
 * 1..200 on the raw string and would store a blank title; here 1..200 applies after stripping, so a
 * whitespace-only title is the same 422 string_too_short as an empty one.
 */
export function validateUpdateConversation(body: unknown): Validated<{ title: string }> {
  const result = validateBody<{ title: string }>(UPDATE_CONVERSATION_SCHEMA, body);
  if (!result.ok) return result;
  const raw = result.value.title;
  const title = raw.trim();
  if (title.length < 1) {
    return {
      ok: false,
      issues: [
        issue('string_too_short', ['body', 'title'], 'String should have at least 1 character', raw, {
          min_length: 1,
        }),
      ],
    };
  }
  if (title.length > MAX_TITLE_LENGTH) {
    return {
      ok: false,
      issues: [
        issue(
          'string_too_long',
          ['body', 'title'],
          `String should have at most ${MAX_TITLE_LENGTH} characters`,
          raw,
          { max_length: MAX_TITLE_LENGTH },
        ),
      ],
    };
  }
  return { ok: true, value: { title } };
}
