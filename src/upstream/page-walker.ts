/**
 * The page walker: Relay-style edges over the upstream's forward-only, filter-after-cut search.
 *
 * A cursor names one edge by (upstream page token, upstream page size, index within that page's
 * results, filter). Resuming refetches that same upstream page and skips up to the index, so any edge
 * can be resumed, not only page ends. Because the upstream filters after cutting its page, a page may
 * be short or empty while more follow: we keep fetching until `first` items or the end, but at most
 * `maxUpstreamCalls` pages per field, then answer what we have with `hasNextPage: true` and a cursor
 * that continues where we stopped.
 */

import { badUserInput } from '../errors.ts';
import { base64urlOfText } from './base64url-text.ts';
import type {
  Conversation,
  ConversationFilter,
  ConversationPage,
  ConversationPageRequest,
} from './port/conversation.ts';

/** Upstream page size used when filters are active: large pages mean fewer calls for sparse matches. */
const FILTERED_UPSTREAM_PAGE_SIZE = 100;
/** Bound on upstream search calls per connection field. */
export const DEFAULT_MAX_UPSTREAM_CALLS = 5;
/** Largest upstream page size a cursor may name (guards against crafted cursors). */
const MAX_CURSOR_PAGE_SIZE = 1000;

/** Tunables of the walk; the defaults suit production, tests shrink them to exercise the bounds. */
export interface PagingSettings {
  /** Upstream page size when a filter is active. @default 100 */
  filteredPageSize: number;
  /** Upstream search calls per connection field. @default 5 */
  maxUpstreamCalls: number;
}

/** The production paging settings. */
export const DEFAULT_PAGING: PagingSettings = {
  filteredPageSize: FILTERED_UPSTREAM_PAGE_SIZE,
  maxUpstreamCalls: DEFAULT_MAX_UPSTREAM_CALLS,
};

/** What a cursor carries. `index: -1` means "before the first result of that page". */
export interface CursorPosition {
  pageToken: string | null;
  pageSize: number;
  index: number;
  filterKey: string;
}

/** The shape the Pothos relay plugin expects from a connection resolver. */
export interface ConversationConnectionShape {
  edges: Array<{ cursor: string; node: Conversation }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

/** A stable key of the filter, so a cursor is not resumed under different filters. */
export function filterKey(filter: ConversationFilter): string {
  return JSON.stringify([filter.trigger ?? null, filter.repository ?? null]);
}

/**
 * Opaque cursor: base64url of the JSON text of `[1, pageToken, pageSize, index, filterKey]`, byte for
 * byte what `JSON.stringify` of that array gives. Minted for every edge of every page (21 per list of
 * 20), so the text is put together from its parts (the integers are written as JSON writes them) and
 * encoded through one reused buffer instead of a new array, a JSON pass and a new Buffer per cursor
 * (test/upstream/page-walker-cursor.test.ts holds it to the old `Buffer.from(JSON.stringify(...))`).
 */
function encodeCursor(position: CursorPosition): string {
  return base64urlOfText(
    `[1,${JSON.stringify(position.pageToken)},${jsonNumber(position.pageSize)},${jsonNumber(position.index)},${JSON.stringify(position.filterKey)}]`,
  );
}

/** A number as JSON writes it (`null` for what JSON cannot hold). */
function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * The cursors of one upstream page's edges: the page's token, size and filter are written once, and
 * each edge adds its index. The same text as {@link encodeCursor} of the same position.
 */
function pageCursors(pageToken: string | null, pageSize: number, key: string): (index: number) => string {
  const head = `[1,${JSON.stringify(pageToken)},${jsonNumber(pageSize)},`;
  const tail = `,${JSON.stringify(key)}]`;
  return (index) => base64urlOfText(`${head}${jsonNumber(index)}${tail}`);
}

/**
 * Decodes and validates a cursor.
 * @throws GraphQLError BAD_USER_INPUT for anything this gateway did not produce
 */
export function decodeCursor(cursor: string): CursorPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badUserInput('Invalid cursor.');
  }
  if (!Array.isArray(parsed) || parsed.length !== 5 || parsed[0] !== 1) throw badUserInput('Invalid cursor.');
  const [, pageToken, pageSize, index, key] = parsed as unknown[];
  const valid =
    (pageToken === null || (typeof pageToken === 'string' && pageToken.length <= 512)) &&
    Number.isInteger(pageSize) &&
    (pageSize as number) >= 1 &&
    (pageSize as number) <= MAX_CURSOR_PAGE_SIZE &&
    Number.isInteger(index) &&
    (index as number) >= -1 &&
    (index as number) < (pageSize as number) &&
    typeof key === 'string';
  if (!valid) throw badUserInput('Invalid cursor.');
  return {
    pageToken: pageToken as string | null,
    pageSize: pageSize as number,
    index: index as number,
    filterKey: key as string,
  };
}

/** Fetches one upstream page; the connection walker calls it. */
export type PageFetcher = (page: ConversationPageRequest) => Promise<ConversationPage>;

/** Collects up to `first` conversations starting after `start`, within the upstream-call bound. */
export async function collectConnection(options: {
  first: number;
  start: CursorPosition | null;
  filter: ConversationFilter;
  fetchPage: PageFetcher;
  settings?: PagingSettings;
}): Promise<ConversationConnectionShape> {
  const { first, start, filter, fetchPage } = options;
  const settings = options.settings ?? DEFAULT_PAGING;
  const maxCalls = settings.maxUpstreamCalls;
  const key = filterKey(filter);
  const filtered = filter.trigger != null || filter.repository != null;
  // Without filters every upstream result is ours, so asking for exactly `first` wastes nothing.
  const freshPageSize = filtered ? settings.filteredPageSize : first;

  const edges: ConversationConnectionShape['edges'] = [];
  let token = start ? start.pageToken : null;
  let pageSize = start ? start.pageSize : freshPageSize;
  let skipThrough = start ? start.index : -1;
  let calls = 0;
  let hasNextPage = false;
  // Where to continue when we stop with no edge to point at (bound hit on empty pages).
  let continueAt: CursorPosition | null = null;

  for (;;) {
    const page = await fetchPage({ token, limit: pageSize });
    calls++;
    const results = page.conversations;
    const cursorAt = pageCursors(token, pageSize, key);
    let i = skipThrough + 1;
    for (; i < results.length && edges.length < first; i++) {
      const node = results[i];
      // A record the gateway could not read (dropped and logged upstream); its index stays taken so
      // the cursors of its neighbours keep naming the same upstream positions.
      if (node == null) continue;
      // After the last result of a page, "resume here" is "start of the next page": encoding that
      // directly saves refetching a page only to skip all of it (the common page-end resume).
      const cursor =
        i === results.length - 1 && page.nextPageToken !== null
          ? encodeCursor({
              pageToken: page.nextPageToken,
              pageSize: freshPageSize,
              index: -1,
              filterKey: key,
            })
          : cursorAt(i);
      edges.push({ node, cursor });
    }
    if (edges.length >= first) {
      hasNextPage = results.slice(i).some((rest) => rest != null) || page.nextPageToken !== null;
      break;
    }
    if (page.nextPageToken === null) {
      hasNextPage = false;
      break;
    }
    if (calls >= maxCalls) {
      hasNextPage = true;
      continueAt = { pageToken: page.nextPageToken, pageSize: freshPageSize, index: -1, filterKey: key };
      break;
    }
    token = page.nextPageToken;
    pageSize = freshPageSize;
    skipThrough = -1;
  }

  const lastEdge = edges[edges.length - 1];
  // When the bound stops us, every page scanned so far is used up: endCursor then points at the start
  // of the next upstream page rather than at the last edge, so resuming does not rescan (possibly many)
  // empty filtered pages. Edge cursors still resume from their own edge.
  const endCursor = continueAt ? encodeCursor(continueAt) : (lastEdge?.cursor ?? null);
  return {
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: start !== null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor,
    },
  };
}
