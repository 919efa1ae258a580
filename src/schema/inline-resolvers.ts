/**
 * Takes out of the built schema the resolver calls that do nothing the executor would not do itself.
 *
 * graphql-jit compiles a field without a resolver into a property read inside the object it is
 * building; a field with one becomes a handler of its own: a resolve info object, the call, a check
 * for a promise, the result completed apart. Pothos gives two kinds of fields such calls for nothing:
 * - the relay plugin's `edges`, `pageInfo` and `node` are `(parent) => parent.edges` and the like,
 *   exactly the default resolver's read (their values are arrays and records, never functions);
 * - every node's `id` is two async functions (Pothos' `globalID` around `builder.node`'s `id`), so a
 *   promise and two microtask turns per node, around an encoding that is synchronous.
 *
 * On the list bench (20 conversations) the node handlers were the largest allocation of a request
 * (~34 KB of ~210 KB). Answers, errors and paths stay the same: test/schema/inline-resolvers.test.ts
 * runs documents over the schema before and after.
 */
import type { GraphQLField, GraphQLSchema } from 'graphql';
import { isObjectType } from 'graphql';
import { encodeGlobalId } from './global-id.ts';

/** The upstream id of a node of one type, as its `builder.node({ id })` reads it. */
// biome-ignore lint/suspicious/noExplicitAny: one entry per node type, each with its own source type
export type NodeIdOf = (node: any) => unknown;

/**
 * `(parent) => parent.name` (any parameter name, whitespace as a bundler prints it): the resolver
 * Pothos' relay plugin writes for a connection's and an edge's plain fields.
 */
const PROPERTY_READ = /^\(?([A-Za-z_$][\w$]*)\)?=>\1\.([A-Za-z_$][\w$]*)$/;

/** True when `field`'s resolver only reads the property of the field's own name. */
function readsOwnProperty(field: GraphQLField<unknown, unknown>): boolean {
  if (field.resolve === undefined) return false;
  const source = field.resolve.toString().replace(/\s+/g, '');
  return PROPERTY_READ.exec(source)?.[2] === field.name;
}

/**
 * Removes own-property-read resolvers and makes the `id` of each type in `nodeIds` synchronous
 * (`encodeGlobalId(typename, String(id))`, what the relay plugin's `encodeGlobalID` option answers).
 * Changes `schema` in place, once, before anything executes over it; returns how many fields changed.
 */
export function inlineResolvers(schema: GraphQLSchema, nodeIds: Readonly<Record<string, NodeIdOf>>): number {
  let changed = 0;
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const nodeId = nodeIds[type.name];
    for (const field of Object.values(type.getFields())) {
      if (readsOwnProperty(field)) {
        field.resolve = undefined;
        changed++;
      } else if (nodeId !== undefined && field.name === 'id') {
        const typename = type.name;
        field.resolve = (node) => encodeGlobalId(typename, String(nodeId(node)));
        changed++;
      }
    }
  }
  return changed;
}
