/**
 * The connection arguments of `Query.conversations`, read and checked before the page walker
 * (src/upstream/page-walker.ts) runs.
 */
import { badUserInput } from '../errors.ts';
import { type CursorPosition, decodeCursor, filterKey } from '../upstream/page-walker.ts';
import type { ConversationFilter } from '../upstream/port/conversation.ts';

/** Default page size of a connection field. */
export const DEFAULT_PAGE_SIZE = 20;
/** Largest `first` accepted. */
export const MAX_PAGE_SIZE = 100;

/** Arguments of a forward connection field. */
export interface ForwardPagingArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/**
 * Validates forward paging arguments.
 * @throws GraphQLError BAD_USER_INPUT for `last`/`before`, `first` outside 1..MAX_PAGE_SIZE, bad cursors
 */
export function readPagingArgs(
  args: ForwardPagingArgs,
  filter: ConversationFilter,
): { first: number; start: CursorPosition | null } {
  if (args.last != null || args.before != null) {
    throw badUserInput('Backward paging (last/before) is not supported: the upstream only pages forward.');
  }
  const first = args.first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE) {
    throw badUserInput(`first must be between 1 and ${MAX_PAGE_SIZE}.`);
  }
  if (args.after == null) return { first, start: null };
  const start = decodeCursor(args.after);
  if (start.filterKey !== filterKey(filter)) {
    throw badUserInput('The cursor belongs to a different filter (trigger/repository).');
  }
  return { first, start };
}
