/**
 * A user action (`message` or `change_agent_state`), as the socket's `oh_user_action` and
 * POST /api/conversations/{id}/events carry it. Both readers are here, side by side, because they must
 * accept exactly the same set: the route's validator, which answers pydantic-style 422 items, and the
 * runtime's parser, which turns a payload into a typed action or a reason that is safe to log.
 */
import { isJsonObject } from '../../../contract/json.ts';
import { REQUESTABLE_AGENT_STATES, type RequestableAgentStateValue } from '../../../contract/v0/records.ts';
import { type Schema, validateBody, walk } from '../../validation/body-schema.ts';
import type { Validated, ValidationIssue } from '../../validation/issue.ts';

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
 * the clean 422 in its place. The socket path (parseUserAction below) accepts exactly the same set.
 */
export function validateUserActionBody(body: unknown): Validated<{ action: string; args: unknown }> {
  const result = validateBody<{ action: string; args: Record<string, unknown> }>(USER_ACTION_SCHEMA, body);
  if (!result.ok) return result;
  const argsSchema = result.value.action === 'message' ? MESSAGE_ARGS_SCHEMA : CHANGE_AGENT_STATE_ARGS_SCHEMA;
  const issues: ValidationIssue[] = [];
  walk(argsSchema, result.value.args, ['body', 'args'], issues);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: result.value };
}

/** A user action the runtime can act on. */
type ParsedUserAction =
  | { kind: 'message'; content: string; imageUrls: string[]; fileUrls: string[] }
  | { kind: 'change_agent_state'; agentState: RequestableAgentStateValue };

function stringList(value: unknown): string[] | null {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return null;
  return value as string[];
}

/** Validates an `oh_user_action` payload; the reason is safe to log (never echoes the payload). */
export function parseUserAction(raw: unknown): ParsedUserAction | { error: string } {
  if (!isJsonObject(raw)) return { error: 'payload is not an object' };
  const { action, args } = raw;
  if (typeof action !== 'string') return { error: 'payload has no string "action"' };
  if (!isJsonObject(args)) return { error: 'payload has no object "args"' };
  if (action === 'message') {
    if (typeof args.content !== 'string') return { error: 'message without string args.content' };
    const imageUrls = stringList(args.image_urls);
    const fileUrls = stringList(args.file_urls);
    if (imageUrls === null || fileUrls === null) return { error: 'message with non-string urls' };
    return { kind: 'message', content: args.content, imageUrls, fileUrls };
  }
  if (action === 'change_agent_state') {
    const state = args.agent_state;
    if (!(REQUESTABLE_AGENT_STATES as readonly unknown[]).includes(state)) {
      return { error: 'change_agent_state with an unknown agent_state' };
    }
    return { kind: 'change_agent_state', agentState: state as RequestableAgentStateValue };
  }
  return { error: 'unsupported action' };
}
