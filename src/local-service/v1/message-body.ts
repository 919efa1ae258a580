/**
 * The SDK `Message` a client sends (agent server `POST .../events`, the socket's frames, the app
 * server's `initial_message` and send-message): `role` (default `user`), `content` as TextContent /
 * ImageContent parts told apart by `type` (TextContent forbids extra keys), and `run`. Problems are
 * pydantic v2 422 items located under `loc`.
 */
import { isJsonObject } from '../../contract/json.ts';
import type { ContentRecord } from '../../contract/v1/events.ts';
import {
  expectedEnumText,
  issue,
  type Loc,
  type Validated,
  type ValidationIssue,
} from '../validation/issue.ts';

const ROLES = ['user', 'system', 'assistant', 'tool'] as const;

/** A checked message. */
export interface MessageBody {
  role: (typeof ROLES)[number];
  content: ContentRecord[];
  run: boolean;
}

function boolField(input: Record<string, unknown>, key: string, loc: Loc, issues: ValidationIssue[]) {
  const value = input[key];
  if (value === undefined || typeof value === 'boolean') return value as boolean | undefined;
  issues.push(issue('bool_type', [...loc, key], 'Input should be a valid boolean', value));
  return undefined;
}

function contentPart(input: unknown, loc: Loc, issues: ValidationIssue[]): ContentRecord | undefined {
  if (!isJsonObject(input) || typeof input.type !== 'string') {
    issues.push(
      issue('union_tag_not_found', loc, "Unable to extract tag using discriminator 'type'", input, {
        discriminator: "'type'",
      }),
    );
    return undefined;
  }
  const before = issues.length;
  const cachePrompt = boolField(input, 'cache_prompt', [...loc, input.type], issues) ?? false;
  if (input.type === 'text') {
    if (typeof input.text !== 'string') {
      const problem =
        input.text === undefined
          ? ['missing', 'Field required']
          : ['string_type', 'Input should be a valid string'];
      issues.push(
        issue(problem[0] as string, [...loc, 'text', 'text'], problem[1] as string, input.text ?? input),
      );
    }
    for (const key of Object.keys(input)) {
      if (!['type', 'text', 'cache_prompt'].includes(key)) {
        issues.push(
          issue('extra_forbidden', [...loc, 'text', key], 'Extra inputs are not permitted', input[key]),
        );
      }
    }
    return issues.length === before
      ? { cache_prompt: cachePrompt, type: 'text', text: input.text as string }
      : undefined;
  }
  if (input.type === 'image') {
    const urls = input.image_urls;
    if (!Array.isArray(urls) || urls.some((u) => typeof u !== 'string')) {
      issues.push(issue('list_type', [...loc, 'image', 'image_urls'], 'Input should be a valid list', urls));
      return undefined;
    }
    return issues.length === before
      ? { cache_prompt: cachePrompt, type: 'image', image_urls: urls as string[] }
      : undefined;
  }
  issues.push(
    issue(
      'union_tag_invalid',
      loc,
      `Input tag '${input.type}' found using 'type' does not match any of the expected tags: 'text', 'image'`,
      input,
      { discriminator: "'type'", tag: input.type, expected_tags: "'text', 'image'" },
    ),
  );
  return undefined;
}

/**
 * Checks a message at `loc` (`['body']` for a route body). `runDefault` is the model's default for
 * `run`: false on the agent server, true on the app server's send-message. `minContent` 1 where the
 * model says `min_length=1`.
 */
export function readMessage(
  input: unknown,
  loc: Loc,
  options: { runDefault: boolean; minContent?: number },
): Validated<MessageBody> {
  const issues: ValidationIssue[] = [];
  if (!isJsonObject(input)) {
    const msg = 'Input should be a valid dictionary or object to extract fields from';
    return { ok: false, issues: [issue('model_attributes_type', loc, msg, input)] };
  }
  let role: MessageBody['role'] = 'user';
  if (input.role !== undefined) {
    if (typeof input.role === 'string' && (ROLES as readonly string[]).includes(input.role)) {
      role = input.role as MessageBody['role'];
    } else {
      const expected = expectedEnumText(ROLES);
      issues.push(
        issue('literal_error', [...loc, 'role'], `Input should be ${expected}`, input.role, { expected }),
      );
    }
  }
  const content: ContentRecord[] = [];
  const rawContent = input.content ?? [];
  if (!Array.isArray(rawContent)) {
    issues.push(issue('list_type', [...loc, 'content'], 'Input should be a valid list', rawContent));
  } else {
    rawContent.forEach((part, i) => {
      const checked = contentPart(part, [...loc, 'content', i], issues);
      if (checked) content.push(checked);
    });
    const min = options.minContent ?? 0;
    if (rawContent.length < min) {
      issues.push(
        issue(
          'too_short',
          [...loc, 'content'],
          `List should have at least ${min} item after validation, not ${rawContent.length}`,
          rawContent,
          { field_type: 'List', min_length: min, actual_length: rawContent.length },
        ),
      );
    }
  }
  const run = boolField(input, 'run', loc, issues) ?? options.runDefault;
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: { role, content, run } };
}
