/**
 * The page walker's cursors are written from their parts through a reused buffer (page-walker.ts):
 * every cursor it mints must be byte for byte the previous encoding, base64url of `JSON.stringify` of
 * `[1, pageToken, pageSize, index, filterKey]`, for any token (quotes, backslashes, any Unicode), page
 * size, filter and holes in the page, and must still name the position the walk meant.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CursorPosition,
  collectConnection,
  decodeCursor,
  filterKey,
} from '../../src/upstream/page-walker.ts';
import type { Conversation } from '../../src/upstream/port/conversation.ts';

/** The encoding before the rewrite, kept here as the reference. */
function previousEncoding(position: CursorPosition): string {
  return Buffer.from(
    JSON.stringify([1, position.pageToken, position.pageSize, position.index, position.filterKey]),
  ).toString('base64url');
}

const conversation = (id: number) => ({ conversationId: `c${id}` }) as Conversation;
const token = fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: null });

describe('page walker cursors', () => {
  it('are the previous encoding of the position each edge names, for any token, size, filter and holes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          startToken: token,
          nextToken: token,
          pageSize: fc.integer({ min: 1, max: 1000 }),
          holes: fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
          first: fc.integer({ min: 1, max: 30 }),
          trigger: fc.option(fc.string({ unit: 'grapheme', maxLength: 12 }), { nil: null }),
          repository: fc.option(fc.string({ unit: 'binary', maxLength: 12 }), { nil: null }),
        }),
        async ({ startToken, nextToken, pageSize: size, holes, first, trigger, repository }) => {
          // An upstream page never holds more than it was asked for (a cursor's index is below its size).
          const pageSize = Math.max(size, holes.length);
          const filter = { trigger, repository } as Parameters<typeof filterKey>[0];
          const key = filterKey(filter);
          const start: CursorPosition = { pageToken: startToken, pageSize, index: -1, filterKey: key };
          const results = holes.map((hole, index) => (hole ? null : conversation(index)));
          const connection = await collectConnection({
            first,
            start,
            filter,
            settings: { filteredPageSize: 100, maxUpstreamCalls: 1 },
            fetchPage: async () => ({ conversations: results, nextPageToken: nextToken }),
          });
          for (const edge of connection.edges) {
            const position = decodeCursor(edge.cursor);
            expect(edge.cursor).toBe(previousEncoding(position));
            const index = results.indexOf(edge.node);
            const pageEnd = index === results.length - 1 && nextToken !== null;
            expect(position).toEqual(
              pageEnd
                ? { pageToken: nextToken, pageSize: expect.any(Number), index: -1, filterKey: key }
                : { pageToken: startToken, pageSize, index, filterKey: key },
            );
          }
          const end = connection.pageInfo.endCursor;
          if (end !== null) expect(end).toBe(previousEncoding(decodeCursor(end)));
        },
      ),
      { numRuns: 400 },
    );
  });
});
