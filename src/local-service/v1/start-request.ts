/**
 * The body of `POST /api/v1/app-conversations` (and stream-start), `AppConversationStartRequest` at
 * app main: every field optional (`{}` is valid), unknown keys ignored, each present field checked as
 * pydantic would (422 items under `body`). The cleaned request is what the start task echoes: every
 * field present, `conversation_id` dashed (a plain UUID there), `initial_message` normalized.
 */
import { isJsonObject } from '../../contract/json.ts';
import {
  type AppConversationStartRequestRecord,
  V1_GIT_PROVIDERS,
  V1_TRIGGERS,
} from '../../contract/v1/app-server.ts';
import { expectedEnumText, issue, type Validated, type ValidationIssue } from '../validation/issue.ts';
import { dashedUuid, uuidHex } from './conversation-state.ts';
import { readMessage } from './message-body.ts';
import { uuidIssue } from './query.ts';

const AGENT_TYPES = ['default', 'plan'] as const;
const STRING_FIELDS = [
  'sandbox_id',
  'system_message_suffix',
  'llm_model',
  'selected_repository',
  'selected_branch',
  'title',
  'parent_conversation_id',
] as const;

/** Checks a start body; the value is the request as the task echoes it. */
export function readStartRequest(body: unknown): Validated<AppConversationStartRequestRecord> {
  if (!isJsonObject(body)) {
    const msg = 'Input should be a valid dictionary or object to extract fields from';
    return { ok: false, issues: [issue('model_attributes_type', ['body'], msg, body)] };
  }
  const issues: ValidationIssue[] = [];
  const out: AppConversationStartRequestRecord = {
    sandbox_id: null,
    conversation_id: null,
    initial_message: null,
    system_message_suffix: null,
    processors: null,
    llm_model: null,
    selected_repository: null,
    selected_branch: null,
    git_provider: null,
    title: null,
    trigger: null,
    pr_number: [],
    parent_conversation_id: null,
    agent_type: 'default',
    suggested_task: null,
    public: null,
    plugins: null,
    secrets: null,
  };
  for (const field of STRING_FIELDS) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') out[field] = value;
    else issues.push(issue('string_type', ['body', field], 'Input should be a valid string', value));
  }
  if (typeof out.parent_conversation_id === 'string') {
    const hex = uuidHex(out.parent_conversation_id);
    if (hex === undefined)
      issues.push(uuidIssue(['body', 'parent_conversation_id'], out.parent_conversation_id));
    out.parent_conversation_id = hex ?? null;
  }
  const conversationId = body.conversation_id;
  if (conversationId !== undefined && conversationId !== null) {
    const hex = typeof conversationId === 'string' ? uuidHex(conversationId) : undefined;
    if (hex === undefined) issues.push(uuidIssue(['body', 'conversation_id'], String(conversationId)));
    else out.conversation_id = dashedUuid(hex);
  }
  if (body.initial_message !== undefined && body.initial_message !== null) {
    const message = readMessage(body.initial_message, ['body', 'initial_message'], { runDefault: false });
    if (message.ok) out.initial_message = message.value;
    else issues.push(...message.issues);
  }
  const enums = [
    ['git_provider', V1_GIT_PROVIDERS],
    ['trigger', V1_TRIGGERS],
    ['agent_type', AGENT_TYPES],
  ] as const;
  for (const [field, values] of enums) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' && (values as readonly string[]).includes(value)) {
      (out as unknown as Record<string, unknown>)[field] = value;
    } else {
      const expected = expectedEnumText(values);
      issues.push(issue('enum', ['body', field], `Input should be ${expected}`, value, { expected }));
    }
  }
  if (body.pr_number !== undefined) {
    const prs = body.pr_number;
    if (!Array.isArray(prs))
      issues.push(issue('list_type', ['body', 'pr_number'], 'Input should be a valid list', prs));
    else {
      prs.forEach((n, i) => {
        if (!Number.isInteger(n))
          issues.push(issue('int_type', ['body', 'pr_number', i], 'Input should be a valid integer', n));
      });
      out.pr_number = prs as number[];
    }
  }
  if (body.public !== undefined && body.public !== null) {
    if (typeof body.public === 'boolean') out.public = body.public;
    else issues.push(issue('bool_type', ['body', 'public'], 'Input should be a valid boolean', body.public));
  }
  if (body.suggested_task !== undefined && body.suggested_task !== null) {
    if (isJsonObject(body.suggested_task)) out.suggested_task = body.suggested_task;
    else
      issues.push(
        issue(
          'model_type',
          ['body', 'suggested_task'],
          'Input should be a valid dictionary',
          body.suggested_task,
        ),
      );
  }
  if (body.plugins !== undefined && body.plugins !== null) {
    if (Array.isArray(body.plugins)) out.plugins = body.plugins;
    else issues.push(issue('list_type', ['body', 'plugins'], 'Input should be a valid list', body.plugins));
  }
  if (body.secrets !== undefined && body.secrets !== null) {
    const secrets = body.secrets;
    if (!isJsonObject(secrets) || Object.values(secrets).some((v) => typeof v !== 'string')) {
      issues.push(
        issue('dict_type', ['body', 'secrets'], 'Input should be a valid dictionary', '**********'),
      );
    } else {
      // Never stored or echoed in clear: the task shows them as pydantic dumps a SecretStr.
      out.secrets = Object.fromEntries(Object.keys(secrets).map((name) => [name, '**********']));
    }
  }
  if (body.processors !== undefined && body.processors !== null) {
    if (Array.isArray(body.processors)) out.processors = body.processors;
    else
      issues.push(
        issue('list_type', ['body', 'processors'], 'Input should be a valid list', body.processors),
      );
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: out };
}
