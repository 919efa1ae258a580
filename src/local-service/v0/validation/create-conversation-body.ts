/**
 * The body of POST /api/conversations (the real server's InitSessionRequest): its declared shape, with
 * MCP server configs that forbid extra keys, and the caller-chosen id's pattern check.
 */

import { GIT_PROVIDERS, SUGGESTED_TASK_TYPES } from '../../../contract/common.ts';
import type { CreateConversationRequestRecord } from '../../../contract/v0/records.ts';
import { optionalString, type Schema, validateBody } from '../../validation/body-schema.ts';
import { issue, type Validated } from '../../validation/issue.ts';
import { CONVERSATION_ID_PATTERN } from './conversation-id.ts';

const serverWithKey: Schema = {
  kind: 'object',
  name: 'MCPSSEServerConfig',
  extra: 'forbid',
  fields: { url: { schema: { kind: 'string' }, required: true }, api_key: optionalString },
};

const CREATE_CONVERSATION_SCHEMA: Schema = {
  kind: 'object',
  name: 'InitSessionRequest',
  extra: 'forbid',
  fields: {
    repository: optionalString,
    git_provider: { schema: { kind: 'enum', values: GIT_PROVIDERS }, nullable: true },
    selected_branch: optionalString,
    initial_user_msg: optionalString,
    image_urls: { schema: { kind: 'list', item: { kind: 'string' } }, nullable: true },
    replay_json: optionalString,
    suggested_task: {
      nullable: true,
      schema: {
        kind: 'object',
        name: 'SuggestedTask',
        extra: 'ignore',
        fields: {
          git_provider: { schema: { kind: 'enum', values: GIT_PROVIDERS }, required: true },
          task_type: { schema: { kind: 'enum', values: SUGGESTED_TASK_TYPES }, required: true },
          repo: { schema: { kind: 'string' }, required: true },
          issue_number: { schema: { kind: 'int' }, required: true },
          title: { schema: { kind: 'string' }, required: true },
        },
      },
    },
    create_microagent: {
      nullable: true,
      schema: {
        kind: 'object',
        name: 'CreateMicroagent',
        extra: 'ignore',
        fields: {
          repo: { schema: { kind: 'string' }, required: true },
          git_provider: { schema: { kind: 'enum', values: GIT_PROVIDERS }, nullable: true },
          title: optionalString,
        },
      },
    },
    conversation_instructions: optionalString,
    mcp_config: {
      nullable: true,
      schema: {
        kind: 'object',
        name: 'MCPConfig',
        extra: 'forbid',
        fields: {
          sse_servers: { schema: { kind: 'list', item: serverWithKey } },
          stdio_servers: {
            schema: {
              kind: 'list',
              item: {
                kind: 'object',
                name: 'MCPStdioServerConfig',
                extra: 'forbid',
                fields: {
                  name: { schema: { kind: 'string' }, required: true },
                  command: { schema: { kind: 'string' }, required: true },
                  args: { schema: { kind: 'list', item: { kind: 'string' } } },
                  env: { schema: { kind: 'dict', value: { kind: 'string' } } },
                },
              },
            },
          },
          shttp_servers: {
            schema: { kind: 'list', item: { ...serverWithKey, name: 'MCPSHTTPServerConfig' } },
          },
        },
      },
    },
    conversation_id: optionalString,
  },
};

/** Validates a POST /api/conversations body. Conversation ids chosen by the caller must be 32 lowercase hex. */
export function validateCreateConversation(body: unknown): Validated<CreateConversationRequestRecord> {
  const result = validateBody<CreateConversationRequestRecord>(CREATE_CONVERSATION_SCHEMA, body);
  if (!result.ok) return result;
  const id = result.value.conversation_id;
  if (typeof id === 'string' && !CONVERSATION_ID_PATTERN.test(id)) {
    return {
      ok: false,
      issues: [
        issue(
          'string_pattern_mismatch',
          ['body', 'conversation_id'],
          `String should match pattern '${CONVERSATION_ID_PATTERN.source}'`,
          id,
          { pattern: CONVERSATION_ID_PATTERN.source },
        ),
      ],
    };
  }
  return result;
}
