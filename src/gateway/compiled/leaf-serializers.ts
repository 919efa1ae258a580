/**
 * graphql-jit's serializers of the built-in scalars, for the two places that compile queries with it
 * (the prepared operations and @envelop/graphql-jit). By default jit wraps each scalar's `serialize`
 * in a closure and calls it for every leaf of every answer; these answer the common case (a value
 * already of the scalar's type) in place, and hand anything else to the scalar's own `serialize`, so
 * every answer and every error is graphql-js's. A list of 20 conversations serializes ~400 leaves.
 */
import { GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLString } from 'graphql';

/** GraphQL's Int: a 32-bit signed integer. */
const MAX_INT = 2_147_483_647;
const MIN_INT = -2_147_483_648;

/** graphql-jit's `customSerializers`: the built-in scalars, by name. */
export const LEAF_SERIALIZERS: Readonly<Record<string, (value: unknown) => unknown>> = {
  String: (value) => (typeof value === 'string' ? value : GraphQLString.serialize(value)),
  ID: (value) => (typeof value === 'string' ? value : GraphQLID.serialize(value)),
  Boolean: (value) => (typeof value === 'boolean' ? value : GraphQLBoolean.serialize(value)),
  Int: (value) =>
    typeof value === 'number' && Number.isInteger(value) && value <= MAX_INT && value >= MIN_INT
      ? value
      : GraphQLInt.serialize(value),
  Float: (value) =>
    typeof value === 'number' && Number.isFinite(value) ? value : GraphQLFloat.serialize(value),
};
