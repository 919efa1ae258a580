/**
 * The query string of GET /api/conversations/{id}/events: ids, direction and page size parsed as
 * FastAPI would (422 for text that is not an int or one of pydantic's boolean words). The page size's
 * range is not a 422: the route checks it against the bounds here and answers 400, as the real server.
 */
import { issue, type Validated, type ValidationIssue } from '../../validation/issue.ts';
import { parseIntStrict } from '../../validation/strict-int.ts';

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
