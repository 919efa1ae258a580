/**
 * The body of POST /api/conversations/{id}/events: a user action (`message` or `change_agent_state`)
 * whose `args` are checked against the shape its action names.
 */
import { REQUESTABLE_AGENT_STATES } from '../../contract/records.ts';
import { type Schema, validateBody, walk } from './body-schema.ts';
import type { Validated, ValidationIssue } from './issue.ts';

const USER_ACTION_SCHEMA: Schema = {
  kind: 'object',
  name: 'UserAction',
  extra: 'ignore',
  fields: {
    action: { schema: { kind: 'enum', values: ['message', 'change_agent_state'] }, required: true },
    args: { schema: { kind: 'dict', value: { kind: 'any' } }, required: true },
  },
};

const MESSAGE_ARGS_SCHEMA: Schema = {
  kind: 'object',
  name: 'MessageAction',
  extra: 'ignore',
  fields: {
    content: { schema: { kind: 'string' }, required: true },
    image_urls: { schema: { kind: 'list', item: { kind: 'string' } }, nullable: true },
    file_urls: { schema: { kind: 'list', item: { kind: 'string' } }, nullable: true },
  },
};

const CHANGE_AGENT_STATE_ARGS_SCHEMA: Schema = {
  kind: 'object',
  name: 'ChangeAgentStateAction',
  extra: 'ignore',
  fields: {
    agent_state: { schema: { kind: 'enum', values: REQUESTABLE_AGENT_STATES }, required: true },
  },
};

/**
 * Validates a POST /api/conversations/{id}/events body: the `oh_user_action` payloads the socket accepts
 * (`message` with string `content`, `change_agent_state` with a requestable state), every problem located
 * in pydantic's style. The real server answers 500 for a payload it cannot turn into an event; this is
 * the clean 422 in its place. The socket path (runtime.parseUserAction) accepts exactly the same set.
 */
export function validateUserActionBody(body: unknown): Validated<{ action: string; args: unknown }> {
  const result = validateBody<{ action: string; args: Record<string, unknown> }>(USER_ACTION_SCHEMA, body);
  if (!result.ok) return result;
  const argsSchema = result.value.action === 'message' ? MESSAGE_ARGS_SCHEMA : CHANGE_AGENT_STATE_ARGS_SCHEMA;
  const issues: ValidationIssue[] = [];
  walk(argsSchema, result.value.args, ['body', 'args'], issues);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: result.value };
}
