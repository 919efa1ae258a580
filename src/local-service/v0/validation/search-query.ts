/**
 * The query string of GET /api/conversations (search): page token, page size and filters, each
 * problem a FastAPI 422 item; and the page token's encoding, which the route writes into
 * `next_page_id` and this parser reads back.
 */
import { CONVERSATION_TRIGGERS } from '../../../contract/v0/records.ts';
import { expectedEnumText, issue, type Validated, type ValidationIssue } from '../../validation/issue.ts';
import { parseIntStrict } from '../../validation/strict-int.ts';

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
