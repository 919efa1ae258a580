/**
 * Custom scalars. DateTime serialises the UTC text src/upstream/timestamps.ts made and checked of the
 * upstream's timestamp (parsing it into a Date here would drop the microseconds).
 */
import { GraphQLScalarType, Kind, valueFromASTUntyped } from 'graphql';
import { badUserInput } from '../errors.ts';
import { charCodeAt } from '../upstream/char-code.ts';
import { upstreamTimestampToUtc } from '../upstream/timestamps.ts';

const LETTER_Z = 90;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

function checkDateTime(value: unknown): string {
  if (typeof value !== 'string' || !ISO_DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) {
    throw badUserInput('DateTime must be an ISO 8601 date-time string.');
  }
  return value;
}

/** ISO 8601 date-time, UTC with `Z`. */
export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description:
    'An ISO 8601 date-time, always UTC with a `Z` suffix, microseconds kept (`2025-08-14T11:30:44.142725Z`). Upstream times with an offset are converted; zone-less ones are read in the zone the gateway is configured with (`UPSTREAM_TIMEZONE`).',
  serialize: (value) => {
    // Resolvers hand over UtcDateTime (src/schema/builder.ts): text src/upstream/timestamps.ts checked
    // where it entered the gateway, which a second full check here cost again (half of the timestamps'
    // ~6% of the list's machine instructions, 40 per page). Text that does not even end in `Z` (a value
    // that got past the types) takes the full check below.
    if (typeof value === 'string' && charCodeAt(value, value.length - 1) === LETTER_Z) return value;
    if (value instanceof Date) return value.toISOString();
    const text = checkDateTime(value);
    if (text.endsWith('Z')) return text;
    // The promise is "always Z", whatever a resolver hands over: an offset converts without loss.
    // A zone-less value cannot be placed without the upstream's zone, which only src/upstream knows:
    // reaching here with one is a bug (masked as "Unexpected error." on that field), never a guess.
    const utc = /[+-]\d{2}:\d{2}$/.test(text) ? upstreamTimestampToUtc(text, 'UTC') : null;
    if (utc === null)
      throw new Error('DateTime without a zone reached the schema; convert it in src/upstream.');
    return utc;
  },
  parseValue: checkDateTime,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) {
      throw badUserInput('DateTime must be a string.');
    }
    return checkDateTime(ast.value);
  },
});

/**
 * Any JSON value, passed through as is (added for events.ts: `raw` upstream event payloads). Output
 * only in practice; as input a literal is read with graphql-js's untyped reader.
 */
export const JsonScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: 'Any JSON value (object, array, string, number, boolean or null), passed through unchanged.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});
