/**
 * The built-in scalars' serializers graphql-jit is given (src/gateway/compiled/leaf-serializers.ts)
 * answer what graphql-js's own `serialize` answers, and throw where it throws with its message, for
 * values of each type and for the odd ones a resolver could hand over.
 */
import { inspect } from 'node:util';
import { GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLString } from 'graphql';
import { describe, expect, it } from 'vitest';
import { LEAF_SERIALIZERS } from '../../src/gateway/compiled/leaf-serializers.ts';

const VALUES: unknown[] = [
  '',
  'text',
  'ünï',
  0,
  -0,
  1,
  -1,
  1.5,
  2_147_483_647,
  2_147_483_648,
  -2_147_483_648,
  -2_147_483_649,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  null,
  undefined,
  10n,
  {},
  [],
  ['a'],
  { valueOf: () => 'inner' },
  { valueOf: () => 7 },
  { toJSON: () => 'json' },
  new Date(0),
  Symbol('s'),
];

/** What `serialize` does with `value`: its answer, or the message it throws. */
function outcome(
  serialize: (value: unknown) => unknown,
  value: unknown,
): { value: unknown } | { error: string } {
  try {
    return { value: serialize(value) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('LEAF_SERIALIZERS', () => {
  const scalars = {
    String: GraphQLString,
    ID: GraphQLID,
    Boolean: GraphQLBoolean,
    Int: GraphQLInt,
    Float: GraphQLFloat,
  };

  it('covers exactly the built-in scalars', () => {
    expect(Object.keys(LEAF_SERIALIZERS).sort()).toEqual(Object.keys(scalars).sort());
  });

  for (const [name, scalar] of Object.entries(scalars)) {
    it(`${name}: every value answers or throws as graphql-js's serialize does`, () => {
      const fast = LEAF_SERIALIZERS[name] as (value: unknown) => unknown;
      for (const value of VALUES) {
        expect(outcome(fast, value), `${name} of ${inspect(value)}`).toEqual(
          outcome((v) => scalar.serialize(v), value),
        );
      }
    });
  }
});
