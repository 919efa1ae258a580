/**
 * Request validation that answers exactly like FastAPI + pydantic v2 do on the real server:
 * `422 {"detail":[{"type","loc","msg","input"(,"ctx")}]}`, every problem listed, nothing stored.
 *
 * Hand-rolled rather than zod because the wire contract is pydantic's error types and messages;
 * mapping zod issues back onto them would be more code than this small schema walker.
 */
import type {
  AddGitProvidersRequestRecord,
  CreateConversationRequestRecord,
  GitProviderValue,
  ValidationIssueRecord,
} from '../contract/records.ts';
import {
  CONVERSATION_TRIGGERS,
  GIT_PROVIDERS,
  REQUESTABLE_AGENT_STATES,
  SUGGESTED_TASK_TYPES,
} from '../contract/records.ts';

/** One 422 detail item; `ctx` appears where pydantic adds it (enum, bounds, json_invalid). */
export interface ValidationIssue extends ValidationIssueRecord {
  ctx?: Record<string, unknown>;
}

/** Outcome of a validation: the cleaned value or the FastAPI detail list. */
export type Validated<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

type Loc = Array<string | number>;

type Schema =
  | { kind: 'any' }
  | { kind: 'string' }
  | { kind: 'int' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'list'; item: Schema }
  | { kind: 'dict'; value: Schema }
  | {
      kind: 'object';
      name: string;
      fields: Record<string, { schema: Schema; required?: boolean; nullable?: boolean }>;
      /** pydantic's `extra='forbid'` (422 extra_forbidden) or the default `ignore` (dropped silently). */
      extra: 'forbid' | 'ignore';
    };

/** pydantic's wording of an enum's allowed values: `'a', 'b' or 'c'`. */
function expectedEnumText(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/** Keys whose values are secrets; they are masked wherever pydantic would echo them back. */
const SECRET_KEYS = new Set(['api_key', 'env', 'token', 'session_api_key']);
const MASK = '**********';

/** Deep copy of an echoed input with secret-bearing keys masked (the real server would echo them). */
function redact(input: unknown, depth = 0): unknown {
  if (depth > 20 || input === null || typeof input !== 'object') return input;
  if (Array.isArray(input)) return input.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) out[k] = SECRET_KEYS.has(k) ? MASK : redact(v, depth + 1);
  return out;
}

function issue(
  type: string,
  loc: Loc,
  msg: string,
  input: unknown,
  ctx?: Record<string, unknown>,
): ValidationIssue {
  const last = loc.at(-1);
  const masked = typeof last === 'string' && SECRET_KEYS.has(last) ? MASK : redact(input);
  return ctx ? { type, loc, msg, input: masked, ctx } : { type, loc, msg, input: masked };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function walk(schema: Schema, input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  switch (schema.kind) {
    case 'any':
      return input;
    case 'string':
      if (typeof input !== 'string')
        issues.push(issue('string_type', loc, 'Input should be a valid string', input));
      return input;
    case 'int':
      return walkInt(input, loc, issues);
    case 'enum':
      if (typeof input !== 'string' || !schema.values.includes(input)) {
        const expected = expectedEnumText(schema.values);
        issues.push(issue('enum', loc, `Input should be ${expected}`, input, { expected }));
      }
      return input;
    case 'list':
      if (!Array.isArray(input)) {
        issues.push(issue('list_type', loc, 'Input should be a valid list', input));
        return input;
      }
      return input.map((item, i) => walk(schema.item, item, [...loc, i], issues));
    case 'dict': {
      if (!isPlainObject(input)) {
        issues.push(issue('dict_type', loc, 'Input should be a valid dictionary', input));
        return input;
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(input)) out[k] = walk(schema.value, v, [...loc, k], issues);
      return out;
    }
    case 'object': {
      if (!isPlainObject(input)) {
        issues.push(
          issue(
            'model_type',
            loc,
            `Input should be a valid dictionary or instance of ${schema.name}`,
            input,
            {
              class_name: schema.name,
            },
          ),
        );
        return input;
      }
      const out: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(schema.fields)) {
        if (!(name in input)) {
          if (field.required) issues.push(issue('missing', [...loc, name], 'Field required', input));
          continue;
        }
        const value = input[name];
        if (value === null && field.nullable) {
          out[name] = null;
          continue;
        }
        out[name] = walk(field.schema, value, [...loc, name], issues);
      }
      if (schema.extra === 'forbid') {
        for (const key of Object.keys(input)) {
          if (!(key in schema.fields)) {
            issues.push(
              issue('extra_forbidden', [...loc, key], 'Extra inputs are not permitted', input[key]),
            );
          }
        }
      }
      return out;
    }
  }
}

/** pydantic's lax int: integers, integral floats and integer strings; each other case has its own type. */
function walkInt(input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  if (typeof input === 'number') {
    if (Number.isInteger(input)) return input;
    issues.push(
      issue(
        'int_from_float',
        loc,
        'Input should be a valid integer, got a number with a fractional part',
        input,
      ),
    );
    return input;
  }
  if (typeof input === 'string') {
    const parsed = parseIntStrict(input);
    if (parsed !== undefined) return parsed;
    issues.push(
      issue(
        'int_parsing',
        loc,
        'Input should be a valid integer, unable to parse string as an integer',
        input,
      ),
    );
    return input;
  }
  issues.push(issue('int_type', loc, 'Input should be a valid integer', input));
  return input;
}

/** A whole-string integer (optional sign, surrounding whitespace allowed as pydantic does), else undefined. */
export function parseIntStrict(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[+-]?\d+$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isSafeInteger(n) ? n : undefined;
}

const optionalString = { schema: { kind: 'string' }, nullable: true } as const;
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

/** Validates a whole JSON body against a model; a non-object body is pydantic's model_attributes_type. */
function validateBody<T>(schema: Schema, body: unknown): Validated<T> {
  if (!isPlainObject(body)) {
    return {
      ok: false,
      issues: [
        issue(
          'model_attributes_type',
          ['body'],
          'Input should be a valid dictionary or object to extract fields from',
          body,
        ),
      ],
    };
  }
  const issues: ValidationIssue[] = [];
  const value = walk(schema, body, ['body'], issues);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: value as T };
}

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

/** A conversation id: a uuid4 hex without dashes. */
export const CONVERSATION_ID_PATTERN = /^[0-9a-f]{32}$/;

/** Cleaned query of GET /api/conversations. */
export interface SearchQuery {
  offset: number;
  limit: number;
  selectedRepository: string | null;
  trigger: string | null;
}

/** Default page size of search, as the real server and its web client use. */
const DEFAULT_SEARCH_LIMIT = 20;
/** Our bound on `limit` (the real server has none; its web client never asks for more). */
const MAX_SEARCH_LIMIT = 100;

/** Page token: base64 of the decimal offset, like the real server (offset 20 -> "MjA="). */
export function encodePageId(offset: number): string {
  return Buffer.from(String(offset), 'utf8').toString('base64');
}

/** Decodes a page token; undefined when it is not canonical base64 of a non-negative decimal integer. */
function decodePageId(pageId: string): number | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(pageId) || pageId.length % 4 !== 0) return undefined;
  const text = Buffer.from(pageId, 'base64').toString('utf8');
  if (!/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/** Validates the search query string (all problems reported together, like FastAPI). */
export function validateSearchQuery(params: URLSearchParams): Validated<SearchQuery> {
  const issues: ValidationIssue[] = [];
  let offset = 0;
  let limit = DEFAULT_SEARCH_LIMIT;
  const pageId = params.get('page_id');
  if (pageId !== null && pageId !== '') {
    const decoded = decodePageId(pageId);
    if (decoded === undefined) {
      issues.push(issue('value_error', ['query', 'page_id'], 'Value error, Invalid page_id', pageId));
    } else {
      offset = decoded;
    }
  }
  const limitText = params.get('limit');
  if (limitText !== null) {
    const parsed = parseIntStrict(limitText);
    if (parsed === undefined) {
      issues.push(
        issue(
          'int_parsing',
          ['query', 'limit'],
          'Input should be a valid integer, unable to parse string as an integer',
          limitText,
        ),
      );
    } else if (parsed < 1) {
      issues.push(
        issue(
          'greater_than_equal',
          ['query', 'limit'],
          'Input should be greater than or equal to 1',
          limitText,
          {
            ge: 1,
          },
        ),
      );
    } else if (parsed > MAX_SEARCH_LIMIT) {
      issues.push(
        issue(
          'less_than_equal',
          ['query', 'limit'],
          `Input should be less than or equal to ${MAX_SEARCH_LIMIT}`,
          limitText,
          { le: MAX_SEARCH_LIMIT },
        ),
      );
    } else {
      limit = parsed;
    }
  }
  const trigger = params.get('conversation_trigger');
  if (trigger !== null && !(CONVERSATION_TRIGGERS as readonly string[]).includes(trigger)) {
    const expected = expectedEnumText(CONVERSATION_TRIGGERS);
    issues.push(
      issue('enum', ['query', 'conversation_trigger'], `Input should be ${expected}`, trigger, { expected }),
    );
  }
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    value: { offset, limit, selectedRepository: params.get('selected_repository'), trigger },
  };
}

/** FastAPI's answer to a body that is not JSON: `json_invalid` located at the failing character. */
export function jsonInvalidIssue(error: unknown, rawLength: number): ValidationIssue {
  const message = error instanceof Error ? error.message : String(error);
  const position = /position (\d+)/.exec(message)?.[1];
  const at = position === undefined ? rawLength : Number(position);
  return issue('json_invalid', ['body', at], 'JSON decode error', {}, { error: 'Expecting value' });
}

/** FastAPI's answer when a required body is absent. */
export function missingBodyIssue(): ValidationIssue {
  return issue('missing', ['body'], 'Field required', null);
}

// ---------------------------------------------------------------------------------------------
// History and lifecycle routes (GET/POST /api/conversations/{id}/events, PATCH, start).

/** Cleaned query of GET /api/conversations/{id}/events; `limit` is range-checked by the route (400). */
export interface EventsQuery {
  startId: number;
  endId: number | null;
  reverse: boolean;
  limit: number;
}

/** Default page size of the events route, as the real server's. */
const DEFAULT_EVENTS_LIMIT = 20;
/** The real server's bounds on the events route's `limit` (outside: 400 `Invalid limit`, not a 422). */
export const MIN_EVENTS_LIMIT = 0;
export const MAX_EVENTS_LIMIT = 100;

const TRUE_WORDS = ['1', 'on', 't', 'true', 'y', 'yes'];
const FALSE_WORDS = ['0', 'off', 'f', 'false', 'n', 'no'];

function intQueryParam(
  params: URLSearchParams,
  name: string,
  issues: ValidationIssue[],
): number | null | undefined {
  const text = params.get(name);
  if (text === null) return null;
  const parsed = parseIntStrict(text);
  if (parsed !== undefined) return parsed;
  // FastAPI does not treat an empty value as absent for an int parameter: `end_id=` is a 422 too.
  issues.push(
    issue(
      'int_parsing',
      ['query', name],
      'Input should be a valid integer, unable to parse string as an integer',
      text,
    ),
  );
  return undefined;
}

/** Parses the events route's query like FastAPI would: ints and pydantic's boolean words, else 422. */
export function validateEventsQuery(params: URLSearchParams): Validated<EventsQuery> {
  const issues: ValidationIssue[] = [];
  const startId = intQueryParam(params, 'start_id', issues);
  const endId = intQueryParam(params, 'end_id', issues);
  const limit = intQueryParam(params, 'limit', issues);
  let reverse = false;
  const reverseText = params.get('reverse');
  if (reverseText !== null) {
    const word = reverseText.toLowerCase();
    if (TRUE_WORDS.includes(word)) reverse = true;
    else if (!FALSE_WORDS.includes(word)) {
      issues.push(
        issue(
          'bool_parsing',
          ['query', 'reverse'],
          'Input should be a valid boolean, unable to interpret input',
          reverseText,
        ),
      );
    }
  }
  if (issues.length > 0 || startId === undefined || endId === undefined || limit === undefined) {
    return { ok: false, issues };
  }
  return {
    ok: true,
    value: { startId: startId ?? 0, endId, reverse, limit: limit ?? DEFAULT_EVENTS_LIMIT },
  };
}

/** Longest accepted conversation title, after stripping (the real server's Field(max_length=200)). */
export const MAX_TITLE_LENGTH = 200;

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
