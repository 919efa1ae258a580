/**
 * The 422 items for a body that never reaches a validator: absent where one is required, or not JSON.
 * The HTTP server answers these before any route runs (or hands them to a route that checks
 * something first), so they live apart from the per-route validators.
 */
import { issue, type ValidationIssue } from './issue.ts';

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
