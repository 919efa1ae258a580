/**
 * The one Pothos builder: plugins, scalars, root types. Domain types live in their own files.
 * Plugin order follows the house style (errors, relay); scope-auth, dataloader and validation are not
 * used: credentials are forwarded rather than checked here, loaders live in the context, and argument
 * bounds are checked where the arguments are read.
 */
import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
import type { UtcDateTime } from '../upstream/timestamps.ts';
import type { GatewayContext } from './context.ts';
import { decodeGlobalId, encodeGlobalId } from './global-id.ts';
import { DateTimeScalar, JsonScalar } from './scalars.ts';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  Scalars: {
    // Output: text checked where it was made (upstream/timestamps.ts); the scalar passes it on.
    DateTime: { Input: string; Output: UtcDateTime };
    ID: { Input: string; Output: string };
    // Added for events.ts (live conversations): `raw` upstream payloads.
    JSON: { Input: unknown; Output: unknown };
    // Uploads (workspace-upload.ts): the WHATWG File graphql-yoga hands over for each multipart part.
    File: { Input: File; Output: never };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ErrorsPlugin, RelayPlugin],
  defaultFieldNullability: false,
  errors: {
    // Deliberately empty: only the project's DomainError subclasses listed on a field become schema
    // types; anything else is a bug and stays masked by Yoga.
    defaultTypes: [],
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    encodeGlobalID: (typename, id) => encodeGlobalId(typename, String(id)),
    decodeGlobalID: (globalId) => decodeGlobalId(globalId),
    nodeTypeOptions: { description: 'An object with a global id, refetchable with `node(id:)`.' },
    pageInfoTypeOptions: { description: 'Where a page of a connection sits in the whole list.' },
    nodeQueryOptions: {
      description: 'Fetches any object by its global id; null when the upstream does not know it.',
      args: { id: { description: 'A global id as returned in `id` fields.' } },
    },
    nodesQueryOptions: {
      description: 'Fetches several objects by global id, in order; null entries for unknown ids.',
      args: {
        ids: { description: 'Global ids as returned in `id` fields; at most 100 (BAD_USER_INPUT above).' },
      },
    },
    idFieldOptions: { description: 'Global id (opaque), usable with `node(id:)`.' },
    hasNextPageFieldOptions: { description: 'Whether more items may follow `endCursor`.' },
    hasPreviousPageFieldOptions: {
      description:
        'Whether items precede `startCursor` (`conversations`, which pages forward only: whether this page was reached with an `after` cursor).',
    },
    startCursorFieldOptions: { description: 'Cursor of the first edge of the page.' },
    endCursorFieldOptions: { description: 'Cursor to pass as `after` to continue after this page.' },
    cursorFieldOptions: { description: 'Opaque cursor: pass as `after` to resume right after this edge.' },
    nodeFieldOptions: { description: 'The item at the end of the edge.' },
    edgesFieldOptions: { description: 'The items of this page with their cursors.' },
    pageInfoFieldOptions: { description: 'Paging information for this page.' },
    firstArgOptions: { description: 'Page size (default 20, at most 100).' },
    afterArgOptions: { description: 'Resume after the edge with this cursor.' },
    beforeArgOptions: {
      description:
        'Resume before the edge with this cursor (backward paging; `conversations` refuses it with BAD_USER_INPUT: the upstream pages its search forward only).',
    },
    lastArgOptions: {
      description:
        'Backward page size (the newest items; `conversations` refuses it with BAD_USER_INPUT: the upstream pages its search forward only).',
    },
  },
});

builder.addScalarType('DateTime', DateTimeScalar);
builder.addScalarType('JSON', JsonScalar);
builder.scalarType('File', {
  description:
    'A file sent with the GraphQL multipart request specification (input only): the operation goes in the `operations` part, each file in a part of its own mapped onto its variable.',
  serialize: () => {
    throw new Error('File is an input type only.');
  },
});

builder.queryType({ description: 'Reads: conversations of the calling user.' });
builder.mutationType({ description: 'Writes: create or join conversations, manage git provider tokens.' });
// Added for events.ts (live conversations).
builder.subscriptionType({ description: "Live streams: a conversation's events as they happen." });
