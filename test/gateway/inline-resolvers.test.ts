/**
 * src/schema/inline-resolvers.ts: only resolvers that read the field's own property are taken out, a
 * node's `id` answers synchronously the global id Pothos' asynchronous one answered, and documents
 * give the same answers, errors and paths over the schema with and without the change.
 */

import {
  GraphQLID,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { describe, expect, it } from 'vitest';
import { builder } from '../../src/schema/builder.ts';
import { encodeGlobalId } from '../../src/schema/global-id.ts';
import { schema } from '../../src/schema/index.ts';
import { inlineResolvers } from '../../src/schema/inline-resolvers.ts';

/** Runs `document` with graphql-jit (the gateway's executor) over `over`, answering from `root`. */
async function run(over: GraphQLSchema, document: string, root: unknown) {
  const compiled = compileQuery(over, parse(document));
  if (!isCompiledQuery(compiled)) throw new Error(JSON.stringify(compiled));
  return JSON.stringify(await compiled.query(root, {}, {}));
}

/** An item as the small schema's resolvers read it. */
interface Item {
  key: string;
  name: string | null;
  plain?: string;
}

function smallSchema() {
  const Item = new GraphQLObjectType<Item>({
    name: 'Item',
    fields: {
      id: { type: new GraphQLNonNull(GraphQLID), resolve: async (item) => item.key },
      name: { type: GraphQLString, resolve: (parent) => parent.name },
      label: { type: GraphQLString, resolve: (parent) => parent.name },
      shout: { type: GraphQLString, resolve: (item) => (item.name as string).toUpperCase() },
      plain: { type: GraphQLString },
    },
  });
  const Holder = new GraphQLObjectType({
    name: 'Holder',
    fields: {
      node: { type: new GraphQLNonNull(Item), resolve: (parent: { node: unknown }) => parent.node },
    },
  });
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        holders: { type: new GraphQLList(Holder), resolve: (root: { holders: unknown }) => root.holders },
      },
    }),
  });
}

describe('inlineResolvers', () => {
  it('takes out only reads of the field’s own property, and makes node ids synchronous', async () => {
    const changed = smallSchema();
    expect(inlineResolvers(changed, { Item: (item: { key: string }) => item.key })).toBe(4);
    const item = changed.getType('Item') as GraphQLObjectType;
    const fields = item.getFields();
    expect(fields.name?.resolve).toBeUndefined();
    // Reads another property, or computes: kept.
    expect(fields.label?.resolve).toBeTypeOf('function');
    expect(fields.shout?.resolve).toBeTypeOf('function');
    expect((changed.getType('Holder') as GraphQLObjectType).getFields().node?.resolve).toBeUndefined();
    const id = fields.id?.resolve?.({ key: 'k1' }, {}, {}, {} as never);
    expect(id).toBe(encodeGlobalId('Item', 'k1'));
  });

  it('answers as before, nulls and errors included', async () => {
    const document = '{ holders { node { id name label shout plain } } }';
    const root = {
      holders: [
        { node: { key: 'a', name: 'first', plain: 'p' } },
        { node: null },
        { node: { key: 'c', name: null } },
        null,
      ],
    };
    const before = smallSchema();
    const after = smallSchema();
    inlineResolvers(after, {});
    expect(await run(after, document, root)).toBe(await run(before, document, root));
  });

  it('on the gateway’s schema: no own-property read is left, and Conversation.id is the global id, at once', () => {
    const pothos = builder.toSchema({ sortSchema: true });
    const ownReads: string[] = [];
    for (const [current, label] of [
      [schema, 'gateway'],
      [pothos, 'pothos'],
    ] as const) {
      for (const type of Object.values(current.getTypeMap())) {
        // Introspection's own types are graphql-js', left as they are.
        if (!(type instanceof GraphQLObjectType) || type.name.startsWith('__')) continue;
        for (const field of Object.values(type.getFields())) {
          const source = String(field.resolve).replace(/\s+/g, '');
          if (field.resolve && source.endsWith(`.${field.name}`) && source.length < 40)
            ownReads.push(`${label}:${type.name}.${field.name}`);
        }
      }
    }
    // Pothos' relay fields were there to take out, and none is left in the gateway's.
    expect(ownReads.filter((name) => name.startsWith('pothos:')).length).toBeGreaterThan(3);
    expect(ownReads.filter((name) => name.startsWith('gateway:'))).toEqual([]);
    const id = (schema.getType('Conversation') as GraphQLObjectType).getFields().id;
    expect(id?.resolve?.({ conversationId: 'abc123' }, {}, {}, {} as never)).toBe(
      encodeGlobalId('Conversation', 'abc123'),
    );
  });
});
